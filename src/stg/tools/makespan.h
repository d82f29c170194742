// `stg validate --replay`'s timed run: the step's makespan under ASTRA-sim's
// issue rules with simple times, and how long each rank's compute stands
// idle (the pipeline bubble, plus waiting for communication).
//
// The rules are the replay's (replay.h), with time:
//   * a compute node takes its roofline time (roofline.h: --peak_tflops,
//     --mem_bw_gbps), one at a time per rank, the ready one with the lowest
//     id first (ASTRA-sim runs one GPU compute node at a time);
//   * SENDs and collectives share the rank's communication slot, the ready
//     one with the lowest id first; a SEND holds it for comm_size /
//     link bandwidth and is then received; a collective is held from its
//     issue until every member has issued it (at the same position of the
//     group's sequence) plus comm_size / link bandwidth (no algorithm factor:
//     the figure compares orders, it does not predict the network);
//   * a RECV completes when it is ready and its SEND is done; every other
//     node completes when ready.
// Times are in nanoseconds (compute truncated as ASTRA-sim does).
// With MakespanOptions::network (ASTRA-sim's network and system files, as
// --astra_sim writes them), messages and collectives are charged instead as
// ASTRA-sim's analytical congestion-unaware backend does (network_makespan.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "stg/hardware/roofline.h"
#include "stg/tools/astra_sim_config.h"
#include "stg/tools/chrome_trace.h"

namespace stg::tools {

struct MakespanOptions {
  hardware::RooflineFigures roofline;
  double link_gbps = 100;  // GB/s per message (--link_gbps)
  // Also return every node's start and end (MakespanResult::timeline): the
  // names of all ranks' nodes are then held in memory.
  bool timeline = false;
  // ASTRA-sim's network and system descriptions: when set, the run charges
  // messages on that network (link_gbps is unused) and, with the system's
  // roofline off, a compute node its duration_micros. `roofline` stays the
  // caller's (set it from the system file's figures to match ASTRA-sim).
  std::shared_ptr<const AstraSimConfig> network;
  // A compute node takes its duration_micros, as with a network whose
  // roofline is off (--print_makespan under --compute_time model without
  // --astra_sim's system file).
  bool durations = false;
  // Above 0: the ranks per pipeline stage, and MakespanResult::breakdown
  // is filled (makespan_by_stage sets it).
  int64_t breakdown_ranks_per_stage = 0;
};

// Where a rank's step time goes (time_breakdown.h): the parts add up to
// the makespan.
struct TimeBreakdown {
  double compute_ns = 0;
  std::map<std::string, double> exposed_comm_ns;  // by axis name
  double bubble_ns = 0;
};

struct MakespanResult {
  bool completed = false;
  std::string error;  // unreadable input, or a node never done
  double makespan_ns = 0;
  // The ranks run, ascending (all, or one per pipeline stage); per rank run:
  // the time its last node is done, its compute time, and the time its
  // compute stands idle within the step (makespan - compute).
  std::vector<int64_t> ranks;
  std::vector<double> end_ns, compute_ns, idle_ns;
  // With MakespanOptions::breakdown_ranks_per_stage: per rank run, where its
  // step time goes.
  std::vector<TimeBreakdown> breakdown;
  // makespan_by_stage: how many ranks were run (the stages' first ranks and
  // the ranks their SENDs and RECVs reach); `ranks` lists the first ranks.
  int64_t ranks_run = 0;
  // How a run on a network description charged time ("compute at ...,
  // messages on ASTRA-sim's network ..." with the files), else "".
  std::string network;
  bool durations = false;  // the simple run timed compute by duration_micros
  // With MakespanOptions::timeline: one event per node of every rank. A
  // compute node runs from its issue to its end; a send or collective from
  // its issue on the communication slot to its end; a receive from the
  // moment its dependencies are done to its end; any other node for 0 ns.
  std::vector<TimelineEvent> timeline;
};

// Runs the traces in `dir` (comm-group file as replay_dir). Run it on a set
// the replay completed; never throws for bad input.
MakespanResult makespan_dir(const std::string& dir, const std::string& comm_group_file,
                            const MakespanOptions& options, int threads = 0);

// The same run over one rank per pipeline stage, the first of each (rank
// s x N/stages), so that it stays fast on large runs: the ranks of a stage
// run the same program, so a collective on a group within the stage (dp,
// tp, cp, ep) completes when the ranks of it that are run have issued it,
// and one on a group across stages (Megatron's embedding group, DualPipe's
// pairs) likewise. The ranks a run rank sends to or receives from are run
// too, until every SEND and RECV has its peer: pipeline peers are the other
// stages' first ranks, and a ring along a mesh axis (ring attention over cp)
// brings in the ring's members and their pipeline peers. The result's
// per-rank figures are the stages' first ranks'; the makespan is over every
// rank run. With ranks of a stage alike, the figures are those of
// makespan_dir (tests/makespan_test.cc).
MakespanResult makespan_by_stage(const std::string& dir, const std::string& comm_group_file,
                                 int64_t stages, const MakespanOptions& options, int threads = 0);

// "makespan: T ns; compute idle per rank: ..." lines ending in '\n'; up to
// 32 ranks listed, else the least, median and largest idle. On a network
// also each rank's finish time (ASTRA-sim's "sys[R] finished").
std::string makespan_summary(const MakespanResult& result);

// makespan_by_stage's figures: "makespan: T ns over one rank per pipeline
// stage ...", then (on a network) each stage's finish time, then each
// stage's compute idle with the largest's share of the makespan (the bubble,
// plus waiting for communication).
std::string makespan_by_stage_summary(const MakespanResult& result);

}  // namespace stg::tools
