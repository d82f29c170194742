// `stg dot`: one rank of a generated run drawn as a Graphviz graph; the text
// is checked against the trace's own node count and rendered by Graphviz.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "gtest/gtest.h"
#include "stg/tools/dot_graph.h"
#include "support/files.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace {

using stg_test::run_program;
using stg_test::run_stg;
using stg_test::RunResult;
using stg_test::TempDir;

// A pipelined, tensor-parallel run with four micro-batches per stage: rank 0
// has compute, collectives, sends, receives and schedule control deps.
std::string generate(TempDir& tmp) {
  const std::string dir = tmp.sub("run");
  const std::vector<std::string> args = {"--model_type",
                                         "gpt",
                                         "--num_stacks",
                                         "2",
                                         "--dmodel",
                                         "64",
                                         "--dff",
                                         "128",
                                         "--head",
                                         "4",
                                         "--seq",
                                         "16",
                                         "--batch",
                                         "8",
                                         "--micro_batch",
                                         "2",
                                         "--dvocal",
                                         "64",
                                         "--dp",
                                         "2",
                                         "--tp",
                                         "2",
                                         "--pp",
                                         "2",
                                         "--pipeline_schedule",
                                         "1f1b",
                                         "--output_dir",
                                         dir,
                                         "--quiet"};
  const RunResult r = run_stg(args, tmp.path());
  EXPECT_EQ(r.status, 0) << r.err;
  return dir;
}

int64_t count(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  return std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator());
}

// Nodes per kind as `stg inspect --json` counts them.
int64_t inspected_nodes(TempDir& tmp, const std::string& dir) {
  const RunResult r = run_stg({"inspect", dir, "--json", "--per_rank"}, tmp.path());
  EXPECT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const nlohmann::json& f : j.at("per_rank"))
    if (f.at("rank") == 0) return f.at("nodes").get<int64_t>();
  return -1;
}

TEST(Dot, MicroBatchOfName) {
  EXPECT_EQ(stg::tools::micro_batch_of("mb0.transformer.0.mha.qkv@0_COMP"), 0);
  EXPECT_EQ(stg::tools::micro_batch_of("mb17.x"), 17);
  EXPECT_EQ(stg::tools::micro_batch_of("mbx.x"), -1);
  EXPECT_EQ(stg::tools::micro_batch_of("mb3"), -1);
  EXPECT_EQ(stg::tools::micro_batch_of("transformer.0.grad"), -1);
}

TEST(Dot, DrawsEveryNodeOfTheRank) {
  TempDir tmp;
  const std::string dir = generate(tmp);
  const RunResult r = run_stg({"dot", dir, "--rank", "0", "--max_nodes", "0"}, tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string& g = r.out;
  EXPECT_EQ(g.rfind("digraph rank {", 0), 0u);
  const int64_t drawn = count(g, "\\n *n[0-9]+ \\[shape=");
  const int64_t nodes = inspected_nodes(tmp, dir);
  EXPECT_EQ(drawn, nodes);
  EXPECT_GT(count(g, "shape=box"), 0);                // compute
  EXPECT_GT(count(g, "shape=hexagon"), 0);            // tp / dp collectives
  EXPECT_GT(count(g, "shape=larrow"), 0);             // sends to stage 1
  EXPECT_GT(count(g, "shape=rarrow"), 0);             // receives from stage 1
  EXPECT_EQ(count(g, "subgraph cluster_mb"), 8 / 2);  // --batch / --micro_batch
  EXPECT_GT(count(g, "\\[style=dashed\\]"), 0);       // 1F1B's order
  EXPECT_EQ(count(g, "truncated"), 0);
}

TEST(Dot, MaxNodesTruncatesWithANote) {
  TempDir tmp;
  const std::string dir = generate(tmp);
  const RunResult r = run_stg({"dot", dir, "--rank", "1", "--max_nodes", "5"}, tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count(r.out, "\\n *n[0-9]+ \\[shape="), 5);
  EXPECT_EQ(count(r.out, "truncated \\[shape=note"), 1);
  EXPECT_NE(r.err.find("drew the first 5 of"), std::string::npos) << r.err;
}

TEST(Dot, MissingRankIsAUsageError) {
  TempDir tmp;
  const std::string dir = generate(tmp);
  const RunResult r = run_stg({"dot", dir, "--rank", "8"}, tmp.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--rank 8"), std::string::npos) << r.err;
  EXPECT_EQ(run_stg({"dot", tmp.sub("nowhere")}, tmp.path()).status, 2);
}

// Graphviz (Debian's graphviz, installed by scripts/setup.sh) accepts it.
TEST(Dot, GraphvizRendersIt) {
  TempDir tmp;
  const std::string dir = generate(tmp);
  const RunResult r = run_stg({"dot", dir, "--rank", "0", "--max_nodes", "0"}, tmp.path());
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string gv = tmp.sub("rank0.gv");
  stg_test::write_file(gv, r.out);
  ASSERT_TRUE(std::filesystem::exists("/usr/bin/dot")) << "graphviz missing: run scripts/setup.sh";
  const std::filesystem::path logs = tmp.sub("dot_logs");
  std::filesystem::create_directories(logs);
  const RunResult svg = run_program({"/usr/bin/dot", "-Tsvg", gv}, logs);
  EXPECT_EQ(svg.status, 0) << svg.err;
  EXPECT_NE(svg.out.find("<svg"), std::string::npos);
  EXPECT_NE(svg.out.find("micro&#45;batch 1"), std::string::npos);
}

}  // namespace
