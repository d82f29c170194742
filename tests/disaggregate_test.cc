// stg infer --disaggregate P:D (docs/inference.md) against the arithmetic
// of disaggregated serving, computed in this file from the model's
// dimensions and the plan, never by calling stg's functions:
//   - every pool holds gcd(P, D) replicas of the plan (one per place:
//     more data parallelism); there are P / gcd prefill pools and D / gcd
//     decode pools, (P + D) x the plan's ranks in all, stage after stage;
//   - the T requests of a place are served by each prefill pool in equal
//     shares in order (pool i: [i T / P', (i + 1) T / P')), and by each
//     decode pool likewise;
//   - each prefill rank sends each decode rank of its place whose requests
//     overlap its own the KV caches of those requests, for every block of
//     its stage: K and V of its KV heads (2 x kv/tp x head dim) x prompt
//     tokens x requests x 2 bytes, and from the last stage their first
//     tokens (2 bytes each); that decode rank receives the same;
//   - a decode step on a decode rank of T_d requests: matrix products of
//     2 x the rank's parameters x T_d FLOPs, attention of 4 x T_d x L x
//     query heads/tp x head dim per block (L = prompt + step + 1); its KV
//     cache holds prompt + decode steps tokens, a prefill rank's the prompt;
//   - the comm-group file covers every rank of every pool.
// Dimensions are tiny (h 256, prompts of 32): each run takes milliseconds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "stg/generate.h"
#include "stg/options.h"
#include "stg/tools/validate.h"
#include "support/files.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"
#include "support/trace_reader.h"

namespace stg {
namespace {

// A llama-like decoder (grouped-query attention, gated MLP).
constexpr int64_t kH = 256, kHeads = 8, kKvHeads = 2, kFfn = 512, kVocab = 1024;
constexpr int64_t kPrompt = 32, kSteps = 3, kHeadDim = kH / kHeads;

struct Pools {
  std::string name;
  int64_t P = 1, D = 1;  // --disaggregate P:D
  int64_t tp = 1, pp = 1;
  int64_t R = 8;       // --requests
  int64_t blocks = 2;  // divisible by pp

  int64_t common() const { return std::gcd(P, D); }
  int64_t prefill_pools() const { return P / common(); }
  int64_t decode_pools() const { return D / common(); }
  int64_t pools() const { return prefill_pools() + decode_pools(); }
  int64_t ranks_per_stage() const { return tp * common(); }  // the places of a stage
  int64_t rank(int64_t pool, int64_t stage, int64_t place) const {
    return (pool * pp + stage) * ranks_per_stage() + place;
  }
  int64_t T() const { return R / common(); }  // requests of a place
  // The requests of a place that prefill pool i and decode pool j serve.
  int64_t prefill_first(int64_t i) const { return i * T() / prefill_pools(); }
  int64_t decode_first(int64_t j) const { return j * T() / decode_pools(); }
  int64_t shared(int64_t i, int64_t j) const {
    const int64_t from = std::max(prefill_first(i), decode_first(j));
    const int64_t to = std::min(prefill_first(i + 1), decode_first(j + 1));
    return std::max<int64_t>(0, to - from);
  }
  // One token of one request in one block's cache on a rank: K and V.
  int64_t cache_token_bytes() const { return 2 * kHeadDim * (kKvHeads / tp) * 2; }
  // What prefill pool i's rank of `stage` sends decode pool j's.
  int64_t sent(int64_t i, int64_t j, int64_t stage) const {
    const int64_t caches = blocks / pp * shared(i, j) * kPrompt * cache_token_bytes();
    return caches + (stage == pp - 1 ? 2 * shared(i, j) : 0);
  }
  // A rank's parameters (pp 1): QKV, output projection, gated MLP per
  // block, both embeddings, split over tp.
  int64_t block_params() const {
    return kH * kHeadDim * (kHeads + 2 * kKvHeads) / tp + kHeadDim * kHeads / tp * kH +
           3 * kH * kFfn / tp;
  }
  int64_t embedding_params() const { return kVocab / tp * kH; }
  int64_t params() const { return blocks * block_params() + 2 * embedding_params(); }
};

// gtest prints a parameter of a failing test with this.
void PrintTo(const Pools& c, std::ostream* os) { *os << c.name; }

Options options_of(const Pools& c, const std::string& dir) {
  Options o;
  o.output_dir = dir;
  o.model = "llama";
  o.num_stacks = c.blocks;
  o.dmodel = kH;
  o.dff = kFfn;
  o.head = kHeads;
  o.component_flags["--kvhead"] = kKvHeads;
  o.dvocal = kVocab;
  o.degree["tp"] = c.tp;
  o.degree["pp"] = c.pp;
  o.threads = 2;
  Serving s;
  s.requests = c.R;
  s.prompt_len = kPrompt;
  s.decode_steps = kSteps;
  s.prefill_replicas = c.P;
  s.decode_replicas = c.D;
  o.serving = s;
  return o;
}

std::string trace_of(const std::string& dir, int64_t rank) {
  return dir + "/workload." + std::to_string(rank) + ".et";
}

// Bytes a rank sends to (or receives from) each peer of `peers`.
std::map<int64_t, int64_t> bytes_by_peer(const std::string& path, bool sends,
                                         const std::set<int64_t>& peers) {
  std::map<int64_t, int64_t> by_peer;
  for (const stg_test::TraceNode& n : stg_test::read_trace_nodes(path))
    if ((sends ? n.send : n.recv) && peers.count(n.peer)) by_peer[n.peer] += n.comm_size;
  return by_peer;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

class Disaggregated : public ::testing::TestWithParam<Pools> {
 protected:
  void SetUp() override {
    const Pools& c = GetParam();
    dir_ = (tmp_.path() / "out").string();
    summary_ = generate(options_of(c, dir_));
  }
  stg_test::TempDir tmp_{{.prefix = "stg_disaggregate", .keep_on_failure = true}};
  std::string dir_;
  RunSummary summary_;
};

// (P + D) x the plan's ranks, replayed to completion; the comm-group file
// names every one of them, and each stage's tensor-parallel groups.
TEST_P(Disaggregated, RanksAndCommGroups) {
  const Pools& c = GetParam();
  const int64_t ranks = (c.P + c.D) * c.tp * c.pp;
  EXPECT_EQ(summary_.ranks, ranks);
  const nlohmann::json groups = nlohmann::json::parse(stg_test::read_file(dir_ + "/workload.json"));
  std::set<int64_t> covered;
  std::set<std::vector<int64_t>> members;
  for (const auto& [id, group] : groups.items()) {
    members.insert(group.get<std::vector<int64_t>>());
    for (int64_t r : group) covered.insert(r);
  }
  EXPECT_EQ(static_cast<int64_t>(covered.size()), ranks);
  EXPECT_EQ(*covered.rbegin(), ranks - 1);
  for (int64_t first = 0; c.tp > 1 && first < ranks; first += c.tp) {
    std::vector<int64_t> tp_group(c.tp);
    std::iota(tp_group.begin(), tp_group.end(), first);
    EXPECT_TRUE(members.count(tp_group)) << "no tensor-parallel group from rank " << first;
  }
  tools::ValidateOptions vo;
  vo.threads = 2;
  vo.replay = true;
  const tools::ValidationReport r = tools::validate_dir(dir_, vo);
  ASSERT_TRUE(r.replay.has_value()) << r.verdict();
  EXPECT_TRUE(r.replay->completed) << tools::replay_summary(*r.replay);
  EXPECT_EQ(r.violations(), 0) << r.verdict();
}

// Every prefill rank sends each decode rank of its place the caches and
// first tokens of the requests both serve, and nothing to the others; the
// decode rank receives exactly that from each prefill rank.
TEST_P(Disaggregated, CachesSentBetweenPoolsByRequest) {
  const Pools& c = GetParam();
  for (int64_t stage = 0; stage < c.pp; ++stage)
    for (int64_t place = 0; place < c.ranks_per_stage(); ++place) {
      std::set<int64_t> prefill_ranks, decode_ranks;
      for (int64_t i = 0; i < c.prefill_pools(); ++i) prefill_ranks.insert(c.rank(i, stage, place));
      for (int64_t j = 0; j < c.decode_pools(); ++j)
        decode_ranks.insert(c.rank(c.prefill_pools() + j, stage, place));
      for (int64_t i = 0; i < c.prefill_pools(); ++i) {
        std::map<int64_t, int64_t> expected;
        for (int64_t j = 0; j < c.decode_pools(); ++j)
          if (c.shared(i, j) > 0)
            expected[c.rank(c.prefill_pools() + j, stage, place)] = c.sent(i, j, stage);
        const int64_t rank = c.rank(i, stage, place);
        EXPECT_EQ(bytes_by_peer(trace_of(dir_, rank), true, decode_ranks), expected)
            << "prefill rank " << rank;
      }
      for (int64_t j = 0; j < c.decode_pools(); ++j) {
        std::map<int64_t, int64_t> expected;
        for (int64_t i = 0; i < c.prefill_pools(); ++i)
          if (c.shared(i, j) > 0) expected[c.rank(i, stage, place)] = c.sent(i, j, stage);
        const int64_t rank = c.rank(c.prefill_pools() + j, stage, place);
        EXPECT_EQ(bytes_by_peer(trace_of(dir_, rank), false, prefill_ranks), expected)
            << "decode rank " << rank;
      }
    }
}

// Each pool's KV cache per rank from its own requests: prefill pools the
// prompts, decode pools prompt + decode steps; the figures name the pools.
TEST_P(Disaggregated, CachePerPool) {
  const Pools& c = GetParam();
  const auto& stages = summary_.serving->stages;
  ASSERT_EQ(static_cast<int64_t>(stages.size()), c.pools() * c.pp);
  const int64_t prefill_requests = c.T() / c.prefill_pools();
  const int64_t decode_requests = c.T() / c.decode_pools();
  for (int64_t pool = 0; pool < c.pools(); ++pool)
    for (int64_t stage = 0; stage < c.pp; ++stage) {
      const auto& figures = stages.at(pool * c.pp + stage);
      const bool prefill = pool < c.prefill_pools();
      const int64_t count = prefill ? c.prefill_pools() : c.decode_pools();
      const int64_t index = prefill ? pool : pool - c.prefill_pools();
      const std::string kind = prefill ? "prefill pool" : "decode pool";
      EXPECT_EQ(
          figures.pool,
          count == 1 ? kind : kind + " " + std::to_string(index) + " of " + std::to_string(count));
      // Requests per rank: its pool's share of its place's.
      const int64_t requests = prefill ? prefill_requests : decode_requests;
      const int64_t tokens = prefill ? kPrompt : kPrompt + kSteps;
      EXPECT_EQ(figures.memory.kv_cache,
                c.blocks / c.pp * requests * tokens * c.cache_token_bytes())
          << figures.pool << " stage " << stage;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Infer, Disaggregated,
    ::testing::Values(Pools{"p1_d2_tp2", 1, 2, 2, 1, 8}, Pools{"p2_d1_tp2", 2, 1, 2, 1, 8},
                      Pools{"p2_d3_tp2", 2, 3, 2, 1, 12}, Pools{"p1_d2_pp2", 1, 2, 1, 2, 8, 4},
                      Pools{"p3_d2_tp2_pp2", 3, 2, 2, 2, 12, 4}, Pools{"p2_d4", 2, 4, 1, 1, 8}),
    [](const ::testing::TestParamInfo<Pools>& info) { return info.param.name; });

// A decode step on a decode rank (1:2, tp 2: 4 of the 8 requests each):
// 2 FLOPs per weight per request in the matrix products, 4 per (request,
// cached token, query-head dim) in attention, the cache of L tokens read;
// the prefill rank's matrix products over all 8 prompts.
TEST(Disaggregate, DecodeRankFlopsFromItsRequests) {
  const Pools c{"p1_d2_tp2", 1, 2, 2, 1, 8};
  stg_test::TempDir tmp({.prefix = "stg_disaggregate", .keep_on_failure = true});
  const std::string dir = (tmp.path() / "out").string();
  const RunSummary s = generate(options_of(c, dir));
  const int64_t decode_requests = c.R / 2, L = kPrompt + 1;
  for (int64_t j = 0; j < 2; ++j) {
    int64_t matmul = 0, attention = 0, all = 0;
    for (const stg_test::TraceNode& n :
         stg_test::read_trace_nodes(trace_of(dir, c.rank(1 + j, 0, 0)))) {
      if (!n.compute || !contains(n.name, ".decode0.")) continue;
      all += n.num_ops;
      if (n.op_type == "M" && !contains(n.name, "ffn.xupgate")) matmul += n.num_ops;
      if (contains(n.name, "attn_kernel.qkv@")) attention += n.num_ops;
    }
    EXPECT_EQ(matmul, 2 * c.params() * decode_requests);
    EXPECT_EQ(attention, c.blocks * 4 * decode_requests * L * (kHeads / c.tp) * kHeadDim);
    const auto& phase = s.serving->stages.at(1 + j).phases.at(0);
    EXPECT_EQ(phase.phase, "decode 0");
    EXPECT_EQ(phase.flops, all);
    EXPECT_EQ(phase.weight_bytes, 2 * c.params());
    EXPECT_EQ(phase.kv_bytes, c.blocks * decode_requests * L * c.cache_token_bytes());
  }
  int64_t prefill_matmul = 0;
  for (const stg_test::TraceNode& n : stg_test::read_trace_nodes(trace_of(dir, 0)))
    if (n.compute && contains(n.name, ".prefill.") && n.op_type == "M" &&
        !contains(n.name, "ffn.xupgate"))
      prefill_matmul += n.num_ops;
  EXPECT_EQ(prefill_matmul,
            2 * (c.blocks * c.block_params() + c.embedding_params()) * c.R * kPrompt +
                2 * c.embedding_params() * c.R);
}

// Requests that do not split over the pools, and a pool over the GPU's
// memory (named): one line naming the flag, exit status 2, nothing written.
TEST(Disaggregate, BadInputsAreRefused) {
  stg_test::TempDir tmp({.prefix = "stg_disaggregate"});
  const std::vector<std::string> model = {
      "--model_type", "llama", "--num_stacks", "2",  "--dmodel",       "256",
      "--dff",        "512",   "--head",       "8",  "--kvhead",       "2",
      "--dvocal",     "1024",  "--prompt_len", "32", "--decode_steps", "3"};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--disaggregate", "1:2", "--requests", "3"},
       "--requests 3 does not split evenly over --disaggregate 1:2"},
      {{"--disaggregate", "2:3", "--requests", "12", "--micro_batch", "3"},
       "--micro_batch 3 does not split evenly over --disaggregate 2:3"},
      {{"--disaggregate", "2:2", "--requests", "3"},
       "--requests 3 does not split evenly over --disaggregate 2:2"},
      {{"--disaggregate", "1:2", "--requests", "2", "--cp", "2"}, "are not divisible by --cp 2"},
      {{"--disaggregate", "1:100", "--requests", "100"}, "--disaggregate 1:100 needs 101 pools"},
      {{"--disaggregate", "1:2", "--requests", "8", "--hbm_gb", "0.001"},
       "a rank of stage 0 (prefill pool) needs"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> args = {"infer", "--output_dir", (tmp.path() / "out").string()};
    args.insert(args.end(), model.begin(), model.end());
    args.insert(args.end(), flags.begin(), flags.end());
    const stg_test::RunResult r = stg_test::run_stg(args, tmp.path());
    EXPECT_EQ(r.status, 2) << message;
    EXPECT_TRUE(contains(r.err, message)) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp.path() / "out")) << message;
  }
}

}  // namespace
}  // namespace stg
