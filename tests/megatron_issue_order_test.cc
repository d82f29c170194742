// The order --framework megatron issues communication in, measured by the
// timed replay (stg/tools/makespan.h; docs/megatron.md "Issue order").
// Megatron-LM's full recompute adds one forward per block and removes
// nothing, so a step with it cannot be shorter. It was, when each weight
// gradient's input all-gather (sequence parallelism) was issued as soon as
// the forward input existed and took the communication slot ahead of the
// backward's tensor-parallel collectives (main before the pass
// defer-weight-gradient-gathers: 6,223,874 ns with full recompute against
// 6,257,810 without, one micro-batch).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stg/tools/makespan.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"

namespace {

using stg_test::run_stg;
using stg_test::TempDir;

// The plan of docs/megatron.md: gpt, 4 blocks, hidden 1024, seq 1024, dp 2,
// tp 2 (sequence parallel), pp 2, 1F1B, a global batch of 8 in
// `micro_batches` micro-batches; its makespan at the default roofline and
// 100 GB/s per message.
double makespan(TempDir& tmp, int micro_batches, const std::string& recompute) {
  const std::string dir = tmp.sub("mb" + std::to_string(micro_batches) + "_" + recompute);
  const std::vector<std::string> args = {"--framework",
                                         "megatron",
                                         "--model_type",
                                         "gpt",
                                         "--num_stacks",
                                         "4",
                                         "--dmodel",
                                         "1024",
                                         "--dff",
                                         "4096",
                                         "--head",
                                         "16",
                                         "--seq",
                                         "1024",
                                         "--dp",
                                         "2",
                                         "--tp",
                                         "2",
                                         "--pp",
                                         "2",
                                         "--batch",
                                         "8",
                                         "--micro_batch",
                                         std::to_string(8 / micro_batches),
                                         "--pipeline_schedule",
                                         "1f1b",
                                         "--activation_recompute",
                                         recompute,
                                         "--output_dir",
                                         dir,
                                         "--quiet"};
  const stg_test::RunResult run = run_stg(args, tmp.path());
  EXPECT_EQ(run.status, 0) << run.err;
  stg::tools::MakespanOptions o;
  o.link_gbps = 100;
  const stg::tools::MakespanResult r = stg::tools::makespan_dir(dir, "", o, 1);
  EXPECT_TRUE(r.completed) << r.error;
  return r.makespan_ns;
}

class MegatronIssueOrder : public testing::TestWithParam<int> {};

TEST_P(MegatronIssueOrder, FullRecomputeIsNeverShorter) {
  TempDir tmp;
  const double without = makespan(tmp, GetParam(), "none");
  const double with = makespan(tmp, GetParam(), "full");
  ASSERT_GT(without, 0);
  EXPECT_GE(with, without);
}

INSTANTIATE_TEST_SUITE_P(MicroBatches, MegatronIssueOrder, testing::Values(1, 4));

}  // namespace
