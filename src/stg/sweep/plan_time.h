// The predicted step time of a plan (`stg plans --sort time`; docs/python.md,
// "Plans by time"), from the figures the sweep already has per pipeline
// stage: FLOPs per rank, and per parallel axis the bytes and collectives a
// rank moves. Pure arithmetic on those figures; each rule is cited in
// plan_time.cc:
//   * compute: FLOPs at a sustained fraction of the GPU's peak (one
//     function, compute_seconds, for a kernel model to replace);
//   * communication: each collective as the replay's ASTRA-sim-like network
//     charges a ring (tools/astra_sim_network.h): per-message latency,
//     messages per ring phase by kind, the system file's chunking, the
//     scale-up bandwidth when the axis's groups lie inside one scale-up
//     domain and the scale-out bandwidth otherwise;
//   * exposure: tensor, context, expert and pipeline traffic on the critical
//     path; data-parallel gradient reduction overlapped with the last
//     micro-batch's backward, but for its last bucket;
//   * the pipeline bubble of 1F1B, (p - 1) / m, divided by v interleaved.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace stg::sweep {

// The collective kinds, in graph::CollType's order.
inline constexpr int kCollectiveKinds = 4;
enum CollectiveIndex { kAllReduce = 0, kAllGather = 1, kReduceScatter = 2, kAllToAll = 3 };

struct ComputeFigures {
  double peak_flops = 0;  // dense tensor-core peak for the element type (FLOP/s)
  double efficiency = 0;  // sustained fraction of the peak
};

// The network as the replay and `--astra_sim` describe it
// (emit/astra_sim_inputs.h): Switch dimensions, bandwidths read as GiB/s.
struct NetworkFigures {
  int64_t scale_up_gpus = 8;     // GPUs of one scale-up domain (NVLink)
  double scale_up_gbps = 0;      // per GPU per direction
  double scale_out_gbps = 0;     // per GPU per direction (its NIC)
  double link_latency_ns = 0;    // per hop
  double endpoint_delay_ns = 0;  // per packet on a group's ring
  double hbm_gbps = 0;           // local-mem-bw: the reductions' reads
  int64_t chunks = 1;            // preferred-dataset-splits
  int64_t active_chunks = 1;     // active-chunks-per-dimension
};

// One axis's traffic of one rank in one step.
struct AxisLoad {
  int64_t members = 1;    // ranks of one of its groups (the ring's length)
  bool scale_up = false;  // each group lies inside one scale-up domain
  // A group of every rank runs one ring per network dimension instead
  // (tools/astra_sim_network.h): the dimensions' sizes and links, the
  // fastest-varying first; empty for a group of fewer ranks.
  std::vector<int64_t> world_dims;
  std::vector<bool> world_scale_up;
  // Overlapped with the backward pass (data-parallel gradients) rather
  // than on the critical path.
  bool overlaps_backward = false;
  std::array<double, kCollectiveKinds> bytes{}, collectives{};  // by kind
  double sent_bytes = 0, sends = 0;                             // point to point
};

// One pipeline stage's rank: its work and traffic per step.
struct StageLoad {
  double flops = 0;
  std::vector<AxisLoad> axes;
};

struct PlanShape {
  int64_t stages = 1, micro_batches = 1, virtual_stages = 1;
};

struct StepTime {
  double compute = 0;          // seconds of compute on the critical stage
  double exposed = 0;          // communication on the critical path
  double overlapped_tail = 0;  // data-parallel traffic the backward does not hide
  double bubble = 0;           // idle time of the schedule's bubble
  double total = 0;
};

// Seconds of `flops` of matrix products and the rest on one GPU.
double compute_seconds(const ComputeFigures& c, double flops);
// Seconds of `collectives` collectives of one kind moving `bytes` in all
// (each rank's buffer sizes, as comm_size counts them) on one ring.
double collective_seconds(const NetworkFigures& n, int kind, int64_t members, bool scale_up,
                          double bytes, double collectives);
// The same collectives on every rank, over the network's dimensions: an
// all-reduce as reduce-scatters up the dimensions, an all-reduce on the
// last and all-gathers back down; the others one phase per dimension.
double world_collective_seconds(const NetworkFigures& n, int kind, const std::vector<int64_t>& dims,
                                const std::vector<bool>& scale_up, double bytes,
                                double collectives);
// Seconds of `sends` point-to-point messages of `bytes` in all.
double send_seconds(const NetworkFigures& n, bool scale_up, double bytes, double sends);
// The step time: the slowest stage's work, exposed traffic and bubble.
StepTime step_time(const std::vector<StageLoad>& stages, const PlanShape& shape,
                   const ComputeFigures& c, const NetworkFigures& n);

}  // namespace stg::sweep
