// Pipeline schedules: the order in which a stage runs the forward and
// backward passes of its micro-batches (and, interleaved, of its chunks of
// layers). Lowering enforces the order with ctrl_deps between the compute
// nodes of successive steps.
#pragma once

#include <string>
#include <vector>

#include "stg/graph/tensor.h"

namespace stg::lower {

enum class Schedule { kNone, kGpipe, k1F1B, kInterleaved };

// One step of a stage's schedule: a phase (graph::Phase) of one
// micro-batch on one chunk. The training schedules step through forward
// and backward passes; a schedule that places weight gradients on their own
// (zero-bubble) has steps of kBackwardWeight too; serving steps through
// prefill and decode steps (phase_step).
struct Step {
  graph::Phase phase = graph::Phase::kForward;
  int phase_step = 0;
  int micro_batch = 0;
  int chunk = 0;  // virtual stage index on this stage (interleaved), else 0
  bool operator==(const Step&) const = default;
};

// The phase of the step that runs a node of phase `node`: the backward
// pass's weight gradients run with the rest of it unless the schedule
// places them on their own.
inline graph::Phase step_phase(graph::Phase node, bool separate_weight_gradients = false) {
  return node == graph::Phase::kBackwardWeight && !separate_weight_gradients
             ? graph::Phase::kBackwardInput
             : node;
}

// Steps that run `phases` in order, each for micro-batches 0..n-1 (a
// workload of several phases, such as prefill then decode steps).
std::vector<Step> phase_steps(const std::vector<Step>& phases, int micro_batches);

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
