// How ASTRA-sim's analytical congestion-unaware backend times one message,
// and how its system layer cuts a collective into chunks and ring phases
// (astra-sim 518bd513ae11 with astra-network-analytical 599a0473a9a7; the
// facts, not its code):
//   * NPU ids are mixed-radix addresses over the dimensions, the first
//     dimension varying fastest; a message goes on the first dimension in
//     which source and destination differ and takes
//       truncate(hops x latency + bytes / (bandwidth x 2^30 / 1e9))  ns
//     (bandwidth in GB/s read as GiB/s), hops 2 on a Switch, 1 on a
//     FullyConnected dimension, the shorter way round on a Ring;
//   * a collective of S bytes is cut into chunks of S / preferred-dataset-
//     splits bytes (at least the NPU count, except for an all-gather, the
//     total then rounded up to whole chunks); each chunk runs the ring phases
//     of plan_collective one after the other;
//   * a group that lists fewer ranks than the network has is one ring over
//     its members in the listed order (one phase); a collective on all NPUs
//     (no group, group "0", or a group listing every rank) runs one ring per
//     dimension: an all-reduce under "localBWAware" as reduce-scatters up
//     the dimensions, an all-reduce on the last and all-gathers back down
//     (the all-gathers the other way round the rings), else one phase of
//     the collective per dimension (an all-gather from the last dimension
//     down);
//   * a ring phase of n members: an all-reduce sends 2(n-1) messages of
//     data/n, an all-gather n-1 of data (and ends with n x data), a
//     reduce-scatter n-1 of data/n (ending with data/n), an all-to-all
//     n(n-1)/2 of data/n.
#pragma once

#include <cstdint>
#include <vector>

#include "stg/tools/astra_sim_config.h"

namespace stg::tools {

class AstraSimNetwork {
 public:
  explicit AstraSimNetwork(const AstraSimConfig& config);

  const AstraSimConfig& config() const { return config_; }
  int64_t npus() const { return npus_; }
  // The time from a message's send to its arrival (src != dst).
  uint64_t message_ns(int64_t src, int64_t dst, uint64_t bytes) const;
  // NPU id step between neighbours of dimension `dim`.
  int64_t stride(size_t dim) const { return stride_[dim]; }

 private:
  AstraSimConfig config_;
  int64_t npus_ = 1;
  std::vector<int64_t> stride_;
};

struct RingPhase {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int queue = 0;                     // the dimension whose queue runs it (0 for a group's ring)
  int64_t nodes = 0;                 // members of the ring
  int64_t sender = 0, receiver = 0;  // this rank's neighbours on the ring
  uint64_t message_bytes = 0;
  int64_t messages = 0;     // messages this rank sends (and receives) in the phase
  bool group_ring = false;  // a group's ring (10 ns endpoint hops, not endpoint-delay)
};

struct CollectivePlan {
  int64_t chunks = 0;  // 0: ASTRA-sim never completes it (an all-gather of < splits bytes)
  std::vector<RingPhase> phases;  // what every chunk runs, in order
};

// Rank `rank`'s part of a collective of `bytes` on `members` (in the listed
// order; empty: all NPUs).
CollectivePlan plan_collective(const AstraSimNetwork& network, int64_t rank, CollectiveKind kind,
                               uint64_t bytes, const std::vector<int64_t>& members);

}  // namespace stg::tools
