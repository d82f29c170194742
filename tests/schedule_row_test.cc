// A pipeline schedule is one row (lower/schedule_row.h; docs/architecture.md
// "How to add a pipeline schedule"): a row written here, in no table of
// src/, is ordered, charted, lowered and validated like the built-in ones,
// so adding a schedule to stg takes its file and the table's line only.
// The test row is GPipe with the backwards in reverse micro-batch order
// (last in, first out), whose bubble is GPipe's: (pp - 1) x (F + B) on
// every stage (Huang et al., GPipe, with F and B the times of a forward and
// a whole backward).
#include "stg/lower/schedule_row.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "cli/flag_text.h"
#include "stg/generate.h"
#include "stg/lower/schedule_timeline.h"
#include "stg/models/families/registry.h"
#include "stg/options.h"
#include "stg/tools/trace_reader.h"
#include "stg/tools/validate.h"
#include "support/temp_dir.h"

namespace stg {
namespace {

using graph::Phase;

class ReverseGpipe final : public lower::ScheduleRow {
 public:
  const char* name() const override { return "reverse-gpipe"; }
  std::vector<lower::Slot> slots(int, int, int micro_batches, int) const override {
    std::vector<lower::Slot> slots;
    for (int k = 0; k < micro_batches; ++k) slots.push_back({{Phase::kForward, 0, k, 0}});
    for (int k = micro_batches - 1; k >= 0; --k)
      slots.push_back({{Phase::kBackwardInput, 0, k, 0}});
    return slots;
  }
  double activations_in_flight(int, int, int micro_batches, int) const override {
    return micro_batches;
  }
};

const ReverseGpipe kReverse;

TEST(ScheduleRow, ATestRowIsInNoTableOfSrc) {
  for (const lower::ScheduleRow* row : lower::schedule_rows()) EXPECT_NE(row, &kReverse);
  EXPECT_THROW(cli::parse_schedule("reverse-gpipe"), UsageError);
  EXPECT_EQ(lower::Schedule::named("1f1b")->name(), std::string("1f1b"));
  EXPECT_EQ(lower::Schedule(), lower::Schedule::named("none"));
}

TEST(ScheduleRow, ATestRowOrdersAndChartsItsStages) {
  const lower::Schedule s = kReverse;
  const int pp = 4, m = 6;
  for (int stage = 0; stage < pp; ++stage) {
    const std::vector<lower::Step> steps = lower::schedule_steps(s, stage, pp, m, 1);
    ASSERT_EQ(static_cast<int>(steps.size()), 2 * m);
    for (int k = 0; k < m; ++k) {
      EXPECT_EQ(steps[k].phase, Phase::kForward);
      EXPECT_EQ(steps[k].micro_batch, k);
      EXPECT_EQ(steps[m + k].phase, Phase::kBackwardInput);
      EXPECT_EQ(steps[m + k].micro_batch, m - 1 - k);
    }
  }
  // Forward 2, whole backward 2 (B 1 + W 1): GPipe's bubble on every stage.
  const double F = 2, B = 2;
  const lower::Timeline t = lower::run_schedule(s, pp, m, 1, {F, 1, 1});
  for (int stage = 0; stage < pp; ++stage) EXPECT_EQ(t.idle[stage], (pp - 1) * (F + B));
  EXPECT_EQ(t.makespan, (m + pp - 1) * (F + B));
  // One micro-batch: the template's order, the row is not asked.
  EXPECT_EQ(lower::schedule_steps(s, 0, pp, 1, 1).size(), 2u);
}

// gpt, dp 2, pp 2, 4 blocks, 4 micro-batches under the test row: the traces
// validate, and each rank's ctrl_deps chain its compute in the row's order.
TEST(ScheduleRow, ATestRowRunsThroughTheGenerator) {
  stg_test::TempDir tmp({.prefix = "stg_schedule_row"});
  Options o;
  o.model = models::find_family("gpt").name;
  o.output_dir = tmp.sub("out");
  o.degree["dp"] = o.degree["pp"] = 2;
  o.num_stacks = 4;
  o.batch = 16;
  o.micro_batch = 2;
  o.seq = 64;
  o.dmodel = 64;
  o.dff = 128;
  o.head = 8;
  o.dvocal = 256;
  o.threads = 2;
  o.pipeline_schedule = kReverse;
  generate(o);
  const tools::ValidationReport r = tools::validate_dir(o.output_dir);
  EXPECT_TRUE(r.errors.empty()) << r.verdict();
  EXPECT_EQ(r.violations(), 0) << r.verdict();
  EXPECT_EQ(r.ranks, 4);

  // The same run under gpipe differs only in the order of the backwards:
  // as many nodes, different ctrl_deps.
  Options g = o;
  g.output_dir = tmp.sub("gpipe");
  g.pipeline_schedule = lower::Schedule::named("gpipe");
  generate(g);
  tools::TraceDir a, b;
  std::string error;
  ASSERT_TRUE(tools::scan_trace_dir(o.output_dir, "", a, error)) << error;
  ASSERT_TRUE(tools::scan_trace_dir(g.output_dir, "", b, error)) << error;
  std::vector<tools::TraceNode> mine, theirs;
  tools::TraceFormat format;
  ASSERT_TRUE(tools::read_trace(a.files.at(0).second, mine, format, error)) << error;
  ASSERT_TRUE(tools::read_trace(b.files.at(0).second, theirs, format, error)) << error;
  ASSERT_EQ(mine.size(), theirs.size());
  std::set<std::vector<uint64_t>> ctrl_mine, ctrl_theirs;
  for (const tools::TraceNode& n : mine) ctrl_mine.insert(n.ctrl_deps);
  for (const tools::TraceNode& n : theirs) ctrl_theirs.insert(n.ctrl_deps);
  EXPECT_GT(ctrl_mine.size(), 1u);
  EXPECT_NE(ctrl_mine, ctrl_theirs);
}

}  // namespace
}  // namespace stg
