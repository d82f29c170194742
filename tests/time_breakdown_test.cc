// Where a rank's step time goes (stg/tools/time_breakdown.h): hand-written
// trace sets whose timelines are worked out here, and the generator's
// --print_makespan figures, whose parts add up to the makespan and whose
// GEMM time is the matrix products' FLOPs at the kernel model's rate.
#include "stg/tools/time_breakdown.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stg/tools/makespan.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"
#include "support/trace_nodes.h"
#include "support/trace_set.h"

namespace stg::tools {
namespace {

namespace v4 = ChakraProtoMsg;
using stg_test::coll_node;
using stg_test::comp_node;
using stg_test::p2p_node;

// One operation per ns (0.001 TFLOPS), messages at 100 GB/s: 100 bytes a ns.
MakespanOptions unit_hardware() {
  MakespanOptions o;
  o.roofline.peak_tflops = 0.001;
  o.link_gbps = 100;
  return o;
}

class TraceSet : public stg_test::TraceSet {
 public:
  TraceSet() : stg_test::TraceSet("stg_time_breakdown_test") {}
};

v4::Node comp(uint64_t id, std::vector<uint64_t> deps, int64_t ns) {
  return comp_node({id, std::move(deps), {}, "_COMP"}, ns, 1);
}

double exposed(const TimeBreakdown& b, const std::string& axis) {
  const auto it = b.exposed_comm_ns.find(axis);
  return it == b.exposed_comm_ns.end() ? 0 : it->second;
}

// Roofline times are truncated: a few ns per node.
constexpr double kNs = 3;

// Stage 0 computes 1000 ns and sends 100,000 B (1000 ns) to stage 1, which
// waits for it and computes 3000 ns: a 5000 ns step.
TEST(TimeBreakdown, PipelineSendIsExposedAndTheWaitIsTheBubble) {
  TraceSet t;
  t.write_comm_groups(R"({"1": [0], "2": [1]})");
  t.write_rank(0, {comp(1, {}, 1000), p2p_node(true, {2, {1}, {}, "_SEND"}, 1, 5, 100000)});
  t.write_rank(1, {p2p_node(false, {1, {}, {}, "_RECV"}, 0, 5, 100000), comp(2, {1}, 3000)});
  const MakespanResult r = makespan_by_stage(t.dir(), "", 2, unit_hardware(), 1);
  ASSERT_TRUE(r.completed) << r.error;
  ASSERT_EQ(r.breakdown.size(), 2u);
  EXPECT_NEAR(r.makespan_ns, 5000, kNs);
  EXPECT_NEAR(r.breakdown[0].compute_ns, 1000, kNs);
  EXPECT_NEAR(exposed(r.breakdown[0], "pp"), 1000, kNs);
  EXPECT_NEAR(r.breakdown[0].bubble_ns, 3000, kNs);  // after its send, until the step ends
  EXPECT_NEAR(r.breakdown[1].compute_ns, 3000, kNs);
  EXPECT_EQ(exposed(r.breakdown[1], "pp"), 0);
  EXPECT_NEAR(r.breakdown[1].bubble_ns, 2000, kNs);  // its receive from the previous stage
}

// Both ranks of a stage compute 3000 ns beside an all-reduce of 400,000 B
// (4000 ns) issued at 0, then 1000 ns that need it: 1000 ns of the
// all-reduce are exposed, on dp (the file's first block of groups).
TEST(TimeBreakdown, OnlyTheCollectivesTimeWithoutComputeIsExposed) {
  TraceSet t;
  t.write_comm_groups(R"({"1": [0, 1]})");
  for (int rank : {0, 1})
    t.write_rank(rank, {comp(1, {}, 3000), coll_node({2, {}, {}, "_COLL"}, 0, 400000, "1"),
                        comp(3, {2}, 1000)});
  const MakespanResult r = makespan_by_stage(t.dir(), "", 1, unit_hardware(), 1);
  ASSERT_TRUE(r.completed) << r.error;
  ASSERT_EQ(r.breakdown.size(), 1u);
  EXPECT_NEAR(r.makespan_ns, 5000, kNs);
  EXPECT_NEAR(r.breakdown[0].compute_ns, 4000, kNs);
  EXPECT_NEAR(exposed(r.breakdown[0], "dp"), 1000, kNs);
  EXPECT_NEAR(r.breakdown[0].bubble_ns, 0, kNs);
}

// A collective of the first and the last stage (Megatron-LM's embedding
// group): stage 1 issues it at 1000 ns, stage 0 at 5000 ns; it then takes
// 200,000 B / 100 GB/s = 2000 ns. Stage 1's 4000 ns of waiting are the
// bubble, not communication.
TEST(TimeBreakdown, WaitingForAMemberOnAnotherStageIsTheBubble) {
  TraceSet t;
  t.write_comm_groups(R"({"1": [0, 1]})");
  t.write_rank(0, {comp(1, {}, 5000), coll_node({2, {1}, {}, "_COLL"}, 0, 200000, "1")});
  t.write_rank(1, {comp(1, {}, 1000), coll_node({2, {1}, {}, "_COLL"}, 0, 200000, "1")});
  const MakespanResult r = makespan_by_stage(t.dir(), "", 2, unit_hardware(), 1);
  ASSERT_TRUE(r.completed) << r.error;
  ASSERT_EQ(r.breakdown.size(), 2u);
  EXPECT_NEAR(r.makespan_ns, 7000, kNs);
  EXPECT_NEAR(exposed(r.breakdown[0], "embedding"), 2000, kNs);
  EXPECT_NEAR(r.breakdown[0].bubble_ns, 0, kNs);
  EXPECT_NEAR(r.breakdown[1].compute_ns, 1000, kNs);
  EXPECT_NEAR(exposed(r.breakdown[1], "embedding"), 2000, kNs);
  EXPECT_NEAR(r.breakdown[1].bubble_ns, 4000, kNs);
}

// The generator's figures (--print_makespan --json under the kernel model,
// on --astra_sim's network): per stage, compute, exposed communication and
// the bubble add up to the stage's makespan, compute by kernel kind adds up
// to compute, and a run with tp and pp has exposed tp and pp time.
nlohmann::json timed_run(const std::vector<std::string>& flags) {
  stg_test::TempDir tmp;
  std::vector<std::string> args = {"--framework", "megatron",     "--model_type",     "gpt",
                                   "--gpu",       "h100-sxm",     "--compute_time",   "model",
                                   "--astra_sim", tmp.sub("out"), "--print_makespan", "--json",
                                   "--quiet"};
  args.insert(args.end(), flags.begin(), flags.end());
  const stg_test::RunResult r = stg_test::run_stg(args, tmp.path());
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(TimeBreakdown, GeneratorPartsAddUpToTheMakespan) {
  const nlohmann::json j = timed_run({"--num_stacks",
                                      "4",
                                      "--dmodel",
                                      "1024",
                                      "--head",
                                      "8",
                                      "--dff",
                                      "4096",
                                      "--seq",
                                      "1024",
                                      "--dvocal",
                                      "32768",
                                      "--batch",
                                      "16",
                                      "--micro_batch",
                                      "2",
                                      "--tp",
                                      "2",
                                      "--pp",
                                      "2",
                                      "--dp",
                                      "2",
                                      "--pipeline_schedule",
                                      "1f1b"});
  ASSERT_EQ(j["time_breakdown"].size(), 2u) << j.dump();
  for (const nlohmann::json& stage : j["time_breakdown"]) {
    double exposed_ms = 0;
    for (const auto& [axis, ms] : stage["exposed_comm_ms"].items()) exposed_ms += ms.get<double>();
    const double makespan_ms = j["makespan_ns"].get<double>() / 1e6;
    EXPECT_NEAR(stage["compute_ms"].get<double>() + exposed_ms + stage["bubble_ms"].get<double>(),
                makespan_ms, 1e-6 * makespan_ms)
        << stage.dump();
    double kernels_ms = 0;
    for (const auto& [kind, ms] : stage["kernels_ms"].items()) kernels_ms += ms.get<double>();
    // The replay charges a node of 0 µs 1 ns.
    EXPECT_NEAR(kernels_ms, stage["compute_ms"].get<double>(), 1e-3 * kernels_ms) << stage.dump();
    EXPECT_GT(stage["exposed_comm_ms"].value("tp", 0.0), 0) << stage.dump();
    EXPECT_GT(stage["exposed_comm_ms"].value("pp", 0.0), 0) << stage.dump();
    EXPECT_GT(stage["bubble_ms"].get<double>(), 0) << stage.dump();  // 1F1B's
  }
}

// GEMM time: the matrix products' FLOPs (Megatron-LM's count for GPT: per
// token and layer 24 h^2 forward, plus 2 h V for the logits; the backward
// twice the forward) at the kernel model's 0.80 of H100 SXM's 989 TFLOPS,
// plus what tile and wave quantization and a microsecond per kernel add
// (docs/kernel-model.md), at most 15% here.
TEST(TimeBreakdown, GemmTimeIsTheMatrixProductsAtTheKernelModelsRate) {
  const double h = 1024, v = 32768, layers = 4, tokens = 4 * 2048;  // batch 8 over dp 2
  const nlohmann::json j =
      timed_run({"--num_stacks", "4", "--dmodel", "1024", "--head", "8", "--dff", "4096", "--seq",
                 "2048", "--dvocal", "32768", "--batch", "8", "--micro_batch", "4", "--dp", "2"});
  ASSERT_EQ(j["time_breakdown"].size(), 1u) << j.dump();
  const double flops = 3 * tokens * (layers * 24 * h * h + 2 * h * v);
  const double ideal_ms = flops / (0.80 * 989e12) * 1e3;
  const double gemm_ms = j["time_breakdown"][0]["kernels_ms"]["GEMM"].get<double>();
  EXPECT_GE(gemm_ms, ideal_ms);
  EXPECT_LE(gemm_ms, 1.15 * ideal_ms);
}

}  // namespace
}  // namespace stg::tools
