// --framework megatron with tied embeddings on stages apart: the embedding
// group in the comm-group file, and the once-per-step all-reduce of the
// shared weight's gradient waiting for every send and receive of its stage
// (docs/megatron.md; passes/tie_embeddings.h says why: with one
// communication slot per rank, an earlier all-reduce on the last stage
// would wait for the first stage, which waits for the last stage's sends).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "stg/generate.h"
#include "stg/options.h"
#include "support/files.h"
#include "support/temp_dir.h"

namespace stg {
namespace {

using json = nlohmann::json;

Options tied_run(const std::string& dir, int pp, std::optional<bool> tie) {
  Options o;
  o.output_dir = dir;
  o.schema = emit::Schema::kJson;
  o.framework = "megatron";
  o.model = "gpt";
  o.num_stacks = 4;
  o.dmodel = 64;
  o.dff = 256;
  o.head = 4;
  o.seq = 32;
  o.batch = 8;
  o.micro_batch = 2;
  o.dvocal = 256;
  o.degree["dp"] = 2;
  o.degree["tp"] = 2;
  o.degree["pp"] = pp;
  o.tie_embeddings = tie;
  o.threads = 1;
  return o;
}

// The group ids whose members are {r, r + (pp-1)·R} for a rank position r of
// a stage of R ranks: what the test expects of the embedding group.
std::set<int> embedding_groups(const json& groups, int ranks, int pp) {
  const int per_stage = ranks / pp;
  std::set<int> out;
  for (const auto& [id, members] : groups.items())
    if (members.size() == 2 && members[0].get<int>() < per_stage &&
        members[1].get<int>() == members[0].get<int>() + (pp - 1) * per_stage)
      out.insert(std::stoi(id));
  return out;
}

TEST(TiedEmbeddings, PipelineEndsAllReduceOnceAfterEveryLinkOfTheirStage) {
  stg_test::TempDir dir;
  const int pp = 3;
  generate(tied_run(dir.path().string(), pp, std::nullopt));  // gpt: tied by default
  const json groups = json::parse(stg_test::read_file(dir.path() / "workload.json"));
  const std::set<int> embedding = embedding_groups(groups, 12, pp);
  ASSERT_EQ(embedding.size(), 4u);  // one per rank position of a stage
  for (int rank = 0; rank < 12; ++rank) {
    const json nodes =
        json::parse(stg_test::read_file(dir.path() / ("workload." + std::to_string(rank) + ".et")))
            .at("nodes");
    std::vector<int> links, sums;
    for (const json& n : nodes) {
      const std::string type = n.at("node_type");
      if (type == "send_comm_node" || type == "recv_comm_node") links.push_back(n.at("id"));
      if (type == "coll_comm_node" && embedding.count(n.at("comm_group").get<int>()))
        sums.push_back(n.at("id"));
    }
    const bool end_stage = rank < 4 || rank >= 8;
    ASSERT_EQ(sums.size(), end_stage ? 1u : 0u) << "rank " << rank;
    if (!end_stage) continue;
    const json& sum = nodes.at(sums[0]);
    EXPECT_EQ(sum.at("comm_type"), "ALL_REDUCE");
    // The shared weight's gradient: Dvocal/tp x Dmodel fp32 elements.
    EXPECT_EQ(sum.at("comm_size").get<int64_t>(), 256 / 2 * 64 * 4);
    const std::vector<int> deps = sum.at("data_deps");
    for (int link : links)
      EXPECT_NE(std::find(deps.begin(), deps.end(), link), deps.end())
          << "rank " << rank << ": the embedding all-reduce does not wait for link node " << link;
  }
}

TEST(TiedEmbeddings, NoEmbeddingGroupWhenUntiedOrOnOneStage) {
  for (auto [pp, tie] : std::vector<std::pair<int, std::optional<bool>>>{{2, false}, {1, true}}) {
    stg_test::TempDir dir;
    generate(tied_run(dir.path().string(), pp, tie));
    const json groups = json::parse(stg_test::read_file(dir.path() / "workload.json"));
    // dp, tp and sp groups only: 4·pp ranks -> 2·pp + 2·pp + 4·pp groups.
    EXPECT_EQ(groups.size(), static_cast<size_t>(8 * pp)) << "pp " << pp;
  }
}

}  // namespace
}  // namespace stg
