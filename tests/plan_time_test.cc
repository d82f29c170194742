// The step time of `stg plans --sort time` (sweep/plan_time.h), from the
// rules written out here: a ring collective as the replay's ASTRA-sim-like
// network runs it (messages of a ring phase per chunk, chunks in waves of
// the active ones, per-message latency of two switch hops plus the
// endpoint delay, bandwidth read as GiB/s, reductions reading 3 x the
// message from HBM), tp exposed, dp hidden by the last micro-batch's
// backward but for its last bucket, and the 1F1B / interleaved bubble.
#include "stg/sweep/plan_time.h"

#include <cmath>

#include "gtest/gtest.h"

namespace {

using stg::sweep::AxisLoad;
using stg::sweep::ComputeFigures;
using stg::sweep::NetworkFigures;
using stg::sweep::StageLoad;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

NetworkFigures toy_network() {
  NetworkFigures n;
  n.scale_up_gpus = 8;
  n.scale_up_gbps = 100;  // read as GiB/s: 100 x 2^30 bytes/s
  n.scale_out_gbps = 10;
  n.link_latency_ns = 1000;
  n.endpoint_delay_ns = 10;
  n.hbm_gbps = 1000;  // 1e12 bytes/s
  n.chunks = 4;
  n.active_chunks = 2;
  return n;
}

TEST(PlanTime, ComputeIsFlopsAtTheSustainedPeak) {
  EXPECT_DOUBLE_EQ(stg::sweep::compute_seconds({1e15, 0.5}, 3e15), 6.0);
}

// One all-reduce of 1 GiB on a ring of 4 inside the scale-up domain: 4
// chunks of 256 MiB, two at a time (2 waves); each chunk's ring sends
// 2 x 3 messages of 64 MiB per rank, 3 of them reduced.
TEST(PlanTime, AllReduceIsTheReplaysRing) {
  const NetworkFigures n = toy_network();
  const double message = kGiB / 4 / 4;
  const double latency = 2 * 6 * (2 * 1000 + 10) * 1e-9;
  const double wire = 2 * 6 * message / (100 * kGiB);
  const double reduce = 2 * 3 * 3 * message / 1e12;
  EXPECT_NEAR(stg::sweep::collective_seconds(n, stg::sweep::kAllReduce, 4, true, kGiB, 1),
              latency + wire + reduce, 1e-12);
  // Across the scale-out links, ten times slower wires.
  EXPECT_NEAR(stg::sweep::collective_seconds(n, stg::sweep::kAllReduce, 4, false, kGiB, 1),
              latency + wire * 10 + reduce, 1e-12);
  // An all-gather of 1 GiB per rank on 4: 3 messages of the whole chunk.
  EXPECT_NEAR(stg::sweep::collective_seconds(n, stg::sweep::kAllGather, 4, true, kGiB, 1),
              2 * 3 * (2 * 1000 + 10) * 1e-9 + 2 * 3 * (kGiB / 4) / (100 * kGiB), 1e-12);
  // Nothing on a group of one.
  EXPECT_EQ(stg::sweep::collective_seconds(n, stg::sweep::kAllReduce, 1, true, kGiB, 1), 0);
}

// An all-reduce of 1 GiB on every rank of a network [8, 2] (scale-up, then
// scale-out): a reduce-scatter on the 8, an all-reduce of the eighth on
// the 2, an all-gather of the eighth back on the 8.
TEST(PlanTime, WorldAllReduceRunsPerDimension) {
  const NetworkFigures n = toy_network();
  const double hop = (2 * 1000 + 10) * 1e-9, S = kGiB;
  const double rs8 = 2 * 7 * hop + 2 * 7 * (S / 4 / 8) / (100 * kGiB) + 2 * 7 * 3 * (S / 32) / 1e12;
  const double ar2 =
      2 * 2 * hop + 2 * 2 * (S / 8 / 4 / 2) / (10 * kGiB) + 2 * 1 * 3 * (S / 64) / 1e12;
  const double ag8 = 2 * 7 * hop + 2 * 7 * (S / 8 / 4) / (100 * kGiB);
  EXPECT_NEAR(
      stg::sweep::world_collective_seconds(n, stg::sweep::kAllReduce, {8, 2}, {true, false}, S, 1),
      rs8 + ar2 + ag8, 1e-12);
}

// A toy plan of two pipeline stages: tp 4 inside a node (exposed), dp 2
// across nodes (reduce-scatter and all-gather of the gradients, hidden by
// the backward of the last of 8 micro-batches but for its last bucket),
// 1F1B's bubble of (p - 1) / m.
TEST(PlanTime, ToyPlanByHand) {
  const NetworkFigures n = toy_network();
  AxisLoad tp;
  tp.members = 4;
  tp.scale_up = true;
  tp.bytes[stg::sweep::kAllReduce] = 8 * kGiB;
  tp.collectives[stg::sweep::kAllReduce] = 64;
  AxisLoad dp;
  dp.members = 2;
  dp.overlaps_backward = true;
  dp.bytes[stg::sweep::kReduceScatter] = 2 * kGiB;
  dp.collectives[stg::sweep::kReduceScatter] = 1;
  dp.bytes[stg::sweep::kAllGather] = 2 * kGiB;
  dp.collectives[stg::sweep::kAllGather] = 1;
  const StageLoad stage{6e14, {tp, dp}};
  const auto t = stg::sweep::step_time({stage, stage}, {2, 8, 1}, {1e15, 0.6}, n);

  const double hop = (2 * 1000 + 10) * 1e-9;
  const double compute = 1.0;
  // tp: 64 all-reduces, 6 messages per chunk, 2 waves; 8 GiB in 16ths.
  const double tp_s = 64 * 2 * 6 * hop + 2 * 6 * (8 * kGiB / 16) / (100 * kGiB) +
                      2 * 3 * 3 * (8 * kGiB / 16) / 1e12;
  // dp: on 2 ranks a reduce-scatter sends 1 message of half a chunk (and
  // reduces it), an all-gather 1 message of a whole chunk.
  const double rs = 2 * hop + 2 * (2 * kGiB / 8) / (10 * kGiB) + 2 * 3 * (2 * kGiB / 8) / 1e12;
  const double ag = 2 * hop + 2 * (2 * kGiB / 4) / (10 * kGiB);
  const double dp_s = rs + ag;
  const double window = compute / 8 * 2 / 3;
  const double last_bucket = dp_s * 160e6 / (4 * kGiB);
  const double tail = std::max(dp_s - window, last_bucket);
  const double bubble = (compute + tp_s) * (2 - 1) / 8.0;
  EXPECT_NEAR(t.compute, compute, 1e-12);
  EXPECT_NEAR(t.exposed, tp_s, 1e-12);
  EXPECT_NEAR(t.overlapped_tail, tail, 1e-12);
  EXPECT_NEAR(t.bubble, bubble, 1e-12);
  EXPECT_NEAR(t.total, compute + tp_s + bubble + tail, 1e-12);

  // Interleaved over 2 virtual stages: half the bubble.
  const auto v2 = stg::sweep::step_time({stage, stage}, {2, 8, 2}, {1e15, 0.6}, n);
  EXPECT_NEAR(v2.bubble, bubble / 2, 1e-12);
}

// The pipeline runs at its slowest stage's pace.
TEST(PlanTime, SlowestStageSetsThePace) {
  const NetworkFigures n = toy_network();
  const auto t =
      stg::sweep::step_time({StageLoad{1e15, {}}, StageLoad{2e15, {}}}, {2, 4, 1}, {1e15, 1.0}, n);
  EXPECT_DOUBLE_EQ(t.compute, 2.0);
  EXPECT_DOUBLE_EQ(t.total, 2.0 * (1 + 1.0 / 4));
}

// Point-to-point sends: two hops of latency each, bytes at the link's rate.
TEST(PlanTime, SendsAreLatencyAndBytes) {
  const NetworkFigures n = toy_network();
  EXPECT_NEAR(stg::sweep::send_seconds(n, false, kGiB, 16), 16 * 2 * 1000e-9 + kGiB / (10 * kGiB),
              1e-12);
}

}  // namespace
