// Pipeline schedules: the order in which a stage runs the forward and
// backward passes of its micro-batches (and, interleaved, of its chunks of
// layers). Lowering enforces the order with ctrl_deps between the compute
// nodes of successive steps.
#pragma once

#include <string>
#include <vector>

namespace stg::lower {

enum class Schedule { kNone, kGpipe, k1F1B, kInterleaved };

struct Step {
  int micro_batch = 0;
  int chunk = 0;  // virtual stage index on this stage (interleaved), else 0
  bool backward = false;
  bool operator==(const Step&) const = default;
};

// Steps of `stage` in execution order. GPipe: all forwards, then all
// backwards. 1F1B (Megatron): pp-stage-1 warm-up forwards, then one forward
// and one backward alternating, then the remaining backwards. Interleaved
// (Megatron): the same over micro-batch x chunk steps, micro-batches in
// groups of pp, chunks ascending forward and descending backward.
std::vector<Step> schedule_steps(Schedule schedule, int stage, int pp, int micro_batches,
                                 int chunks);

// Largest number of micro-batch forwards whose activations a stage holds at
// once (in units of a whole stage's activations).
double activations_in_flight(Schedule schedule, int stage, int pp, int micro_batches, int chunks);

}  // namespace stg::lower
