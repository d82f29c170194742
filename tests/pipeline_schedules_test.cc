// Zero-bubble and DualPipe schedules (issue 22): the order of each stage,
// and the bubble and activations the papers tabulate, measured by running
// the order with unit times (F = B = 2W: a forward 2, a whole backward 2 of
// which W is 1; messages free). The expected figures are the tables'
// formulas, written here: DeepSeek-V3 report Table 2 / DualPipe README
// (F forward chunk, B whole backward chunk, W weight-gradient chunk, F&B an
// overlapped forward and backward pair, here run one after the other) and
// Qi et al., "Zero Bubble Pipeline Parallelism" (ICLR 2024).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "stg/graph/csv_module.h"
#include "stg/graph/weight_gradient_work.h"
#include "stg/lower/schedule_row.h"
#include "stg/lower/schedule_timeline.h"

namespace stg {
namespace {

using graph::Phase;
using lower::Schedule;
using lower::Step;

constexpr double F = 2, B = 2, W = 1;  // B: a whole backward (B + W)
constexpr double FandB = F + B;        // a pair, not overlapped in time

double largest_idle(Schedule s, int pp, int micro_batches) {
  const lower::Timeline t = lower::run_schedule(s, pp, micro_batches, 1, {F, B - W, W});
  return *std::max_element(t.idle.begin(), t.idle.end());
}

int most_in_flight(Schedule s, int pp, int micro_batches) {
  const lower::Timeline t = lower::run_schedule(s, pp, micro_batches, 1, {F, B - W, W});
  return *std::max_element(t.peak_in_flight.begin(), t.peak_in_flight.end());
}

TEST(PipelineSchedules, BubbleOf1F1BIsTheTables) {
  for (int pp : {2, 4, 8})
    for (int m : {8, 16, 20})
      EXPECT_EQ(largest_idle(Schedule::named("1f1b"), pp, m), (pp - 1) * (F + B));
}

TEST(PipelineSchedules, BubbleOfZbH1IsTheTables) {
  for (int pp : {2, 4, 8})
    for (int m : {8, 16, 20})
      EXPECT_EQ(largest_idle(Schedule::named("zb-h1"), pp, m), (pp - 1) * (F + B - 2 * W))
          << pp << " " << m;
}

TEST(PipelineSchedules, BubbleOfDualPipeIsTheTables) {
  for (int pp : {4, 8, 16})
    for (int m : {2 * pp, 2 * pp + 4, 4 * pp})
      EXPECT_EQ(largest_idle(Schedule::named("dualpipe"), pp, m),
                (pp / 2 - 1) * (FandB + B - 3 * W))
          << pp << " " << m;
}

// DualPipeV: the table's PP counts pipeline stages, two per rank.
TEST(PipelineSchedules, BubbleOfDualPipeVIsTheTables) {
  for (int ranks : {2, 4, 8}) {
    const int stages = 2 * ranks;
    for (int m : {2 * ranks, 2 * ranks + 2, 5 * ranks})
      EXPECT_EQ(largest_idle(Schedule::named("dualpipev"), ranks, m),
                (stages / 2 - 1) * (FandB + B - 3 * W))
          << ranks << " " << m;
  }
}

TEST(PipelineSchedules, ActivationsInFlightAreTheTables) {
  for (int pp : {4, 8}) {
    const int m = 4 * pp;
    EXPECT_EQ(most_in_flight(Schedule::named("1f1b"), pp, m), pp);
    EXPECT_EQ(most_in_flight(Schedule::named("zb-h1"), pp, m), pp);
    EXPECT_EQ(most_in_flight(Schedule::named("dualpipe"), pp, m), pp + 1);
    // DualPipeV on pp ranks: 2pp pipeline stages, PP + 1 of them held.
    EXPECT_EQ(most_in_flight(Schedule::named("dualpipev"), pp, m), 2 * pp + 1);
  }
}

// Every stage runs each pass of each micro-batch on each of its chunks once:
// F and B and W apart under the schedules that separate W.
TEST(PipelineSchedules, EveryPassOnce) {
  for (Schedule s :
       {Schedule::named("zb-h1"), Schedule::named("dualpipe"), Schedule::named("dualpipev")})
    for (int pp : {2, 4, 8})
      for (int m : {2 * pp, 2 * pp + 2, 3 * pp + 1}) {
        if (!lower::schedule_requirement(s, pp, m).empty()) continue;
        for (int stage = 0; stage < pp; ++stage) {
          std::multiset<std::tuple<int, int, int>> seen, expected;
          for (const Step& st : lower::schedule_steps(s, stage, pp, m, 1))
            seen.emplace(static_cast<int>(st.phase), st.micro_batch, st.chunk);
          for (int mb = 0; mb < m; ++mb)
            for (int chunk : {0, 1}) {
              // DualPipe: chunk 0 carries the micro-batches entering at
              // stage 0 (the first half), chunk 1 the others.
              if (s == Schedule::named("zb-h1") && chunk == 1) continue;
              if (s == Schedule::named("dualpipe") && (mb < m / 2) != (chunk == 0)) continue;
              for (Phase p : {Phase::kForward, Phase::kBackwardInput, Phase::kBackwardWeight})
                expected.emplace(static_cast<int>(p), mb, chunk);
            }
          EXPECT_EQ(seen, expected) << s->name() << " pp " << pp << " m " << m;
        }
      }
}

std::string show(const std::vector<Step>& steps) {
  std::string out;
  for (const Step& t : steps)
    out += std::string(t.phase == Phase::kForward         ? "F"
                       : t.phase == Phase::kBackwardInput ? "B"
                                                          : "W") +
           std::to_string(t.micro_batch) + " ";
  return out;
}

// ZB-H1 by hand, pp 4, 8 micro-batches: 1F1B's warm-up (pp-s-1 forwards)
// and steady state with B in place of the backward; stage s keeps s W's
// pending and runs them after its last B.
TEST(PipelineSchedules, ZbH1OrderByHand) {
  EXPECT_EQ(show(lower::schedule_steps(Schedule::named("zb-h1"), 0, 4, 8, 1)),
            "F0 F1 F2 F3 B0 W0 F4 B1 W1 F5 B2 W2 F6 B3 W3 F7 B4 W4 B5 W5 B6 W6 B7 W7 ");
  EXPECT_EQ(show(lower::schedule_steps(Schedule::named("zb-h1"), 3, 4, 8, 1)),
            "F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 F5 B5 W2 F6 B6 W3 F7 B7 W4 W5 W6 W7 ");
}

TEST(PipelineSchedules, OldSchedulesKeepWholeBackwards) {
  for (Schedule s :
       {Schedule::named("gpipe"), Schedule::named("1f1b"), Schedule::named("interleaved")}) {
    EXPECT_FALSE(lower::separates_weight_gradients(s));
    for (const Step& st : lower::schedule_steps(s, 0, 2, 4, 2))
      EXPECT_NE(st.phase, Phase::kBackwardWeight);
  }
}

TEST(PipelineSchedules, DualPipeNeedsEvenStagesAndEnoughMicroBatches) {
  EXPECT_NE(lower::schedule_requirement(Schedule::named("dualpipe"), 3, 12), "");
  EXPECT_NE(lower::schedule_requirement(Schedule::named("dualpipe"), 4, 6), "");
  EXPECT_NE(lower::schedule_requirement(Schedule::named("dualpipe"), 4, 9), "");
  EXPECT_EQ(lower::schedule_requirement(Schedule::named("dualpipe"), 4, 8), "");
  EXPECT_NE(lower::schedule_requirement(Schedule::named("dualpipev"), 4, 7), "");
  EXPECT_EQ(lower::schedule_requirement(Schedule::named("dualpipev"), 4, 8), "");
}

// W: the weight gradients and the backward work only they read, within one
// block. Block 1's input gradient dh is B although only block 0's weight
// gradient reads it; dy is B (dh reads it); dw1's input copy is W.
TEST(PipelineSchedules, WeightGradientWorkStopsAtTheBlock) {
  const graph::Graph g = graph::parse_module_csv(
      "id,require_grads,x1,x2,op_type,op_attr,x1_shape,x1_hidden,x2_shape,x2_hidden,grad_of,"
      "extra_attr\n"
      "x,N,,,T,,\"B, D\",1,,,,{\"placement\": \"block:0\"}\n"
      "w0,Y,,,T,,\"D, D\",1,,,,{\"placement\": \"block:0\"}\n"
      "h,N,x,w0,M,\"bd,de->be\",\"B, D\",1,\"D, D\",1,,{\"placement\": \"block:0\"}\n"
      "w1,Y,,,T,,\"D, D\",1,,,,{\"placement\": \"block:1\"}\n"
      "y,N,h,w1,M,\"bd,de->be\",\"B, D\",1,\"D, D\",1,,{\"placement\": \"block:1\"}\n"
      "dy,N,,,T,,\"B, D\",1,,,y,{\"placement\": \"block:1\"}\n"
      "dyc,N,dy,,I,,\"B, D\",1,,,,\"{\"\"placement\"\": \"\"block:1\"\", \"\"backward\"\": "
      "true}\"\n"
      "dw1,N,dyc,h,M,\"be,bd->de\",\"B, D\",1,\"B, D\",1,w1,{\"placement\": \"block:1\"}\n"
      "dh,N,dy,w1,M,\"be,de->bd\",\"B, D\",1,\"D, D\",1,h,{\"placement\": \"block:1\"}\n"
      "dw0,N,dh,x,M,\"be,bd->de\",\"B, D\",1,\"B, D\",1,w0,{\"placement\": \"block:0\"}\n",
      "test.csv");
  const std::vector<bool> w = graph::weight_gradient_work(g);
  std::map<std::string, bool> by_name;
  for (size_t i = 0; i < g.size(); ++i) by_name[g[static_cast<int>(i)].name] = w[i];
  EXPECT_EQ(by_name, (std::map<std::string, bool>{{"x", false},
                                                  {"w0", false},
                                                  {"h", false},
                                                  {"w1", false},
                                                  {"y", false},
                                                  {"dy", false},
                                                  {"dyc", true},
                                                  {"dw1", true},
                                                  {"dh", false},
                                                  {"dw0", true}}));
}

}  // namespace
}  // namespace stg
