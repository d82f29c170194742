// Pipeline schedules: the order in which a stage runs the forward and
// backward passes of its micro-batches (and, interleaved, of its chunks of
// layers). Lowering enforces the order with ctrl_deps between the compute
// nodes of successive steps.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stg/graph/tensor.h"

namespace stg::lower {

class ScheduleRow;

// A pipeline schedule: a handle on its row (lower/schedule_row.h; the
// rows are listed in lower/schedule_rows.cc). The default handle is "none",
// the order left to the simulator.
class Schedule {
 public:
  Schedule() = default;
  Schedule(const ScheduleRow& row) : row_(&row) {}  // NOLINT: a row is a schedule
  // The row whose --pipeline_schedule name is `name` (any case); throws
  // std::invalid_argument for an unknown one.
  static Schedule named(std::string_view name);
  const ScheduleRow& row() const;
  const ScheduleRow* operator->() const { return &row(); }
  bool operator==(const Schedule& other) const { return &row() == &other.row(); }

  // The default: "none".
  static const Schedule kNone;

 private:
  const ScheduleRow* row_ = nullptr;  // null: none
};
inline const Schedule Schedule::kNone{};

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

// Whether the schedule runs each backward as two steps, B (activation
// gradients) and W (weight gradients), ordered on their own: zero-bubble
// ZB-H1, DualPipe and DualPipeV.
bool separates_weight_gradients(Schedule schedule);

// Model chunks each stage holds: `virtual_stages` under interleaved 1F1B, 2
// under DualPipe and DualPipeV, else 1.
int schedule_chunks(Schedule schedule, int virtual_stages);

// Chunks assign-stages cuts the model into per stage: schedule_chunks, but
// 1 under DualPipe, whose chunk 1 is a mirrored copy of the model
// (passes/mirror_model.h) rather than more of its layers.
int model_chunks(Schedule schedule, int virtual_stages);

// Micro-batch replicas of the training graph (passes/micro_batch.h): one per
// micro-batch, except under DualPipe, where replica k is micro-batch k on
// chunk 0 (entering at stage 0) and micro-batch m/2 + k on chunk 1 (entering
// at stage pp-1 through the mirrored copy), so m/2.
int replica_count(Schedule schedule, int micro_batches);
// The number of micro-batches `replicas` replicas stand for.
int micro_batches_of_replicas(Schedule schedule, int replicas);

// DualPipeV places the model's 2pp stages in a V: chunk 0 of stage s is
// pipeline stage s, chunk 1 is pipeline stage 2pp-1-s.
bool v_shaped(Schedule schedule);
// Whether the schedule runs a second copy of the model in the opposite
// direction (DualPipe; passes/mirror_model.h).
bool mirrors_model(Schedule schedule);

// The one-line error for a number of micro-batches the schedule cannot
// order on `pp` stages, or "" (DualPipe: pp even, an even number of
// micro-batches, at least 2pp; DualPipeV: at least 2pp).
std::string schedule_requirement(Schedule schedule, int pp, int micro_batches);

// A slot of a stage's schedule: the steps it runs at once. Every slot holds
// one step except DualPipe's overlapped pairs, a forward of one chunk and
// the backward (B) of the other, which start together.
using Slot = std::vector<Step>;

// Slots of `stage` in execution order (schedule_steps lists their steps).
// Under DualPipe, chunk 0 of stage s is pipeline stage s of the micro-batches
// that enter at stage 0 (0..m/2-1) and chunk 1 pipeline stage pp-1-s of
// those that enter at stage pp-1 (m/2..m-1).
std::vector<Slot> schedule_slots(Schedule schedule, int stage, int pp, int micro_batches,
                                 int chunks);

// Steps that run `phases` in order, each for micro-batches 0..n-1 (a
// workload of several phases, such as prefill then decode steps).
std::vector<Step> phase_steps(const std::vector<Step>& phases, int micro_batches);

// Steps of `stage` in execution order. GPipe: all forwards, then all
// backwards. 1F1B (Megatron): pp-stage-1 warm-up forwards, then one forward
// and one backward alternating, then the remaining backwards. Interleaved
// (Megatron): the same over micro-batch x chunk steps, micro-batches in
// groups of pp, chunks ascending forward and descending backward. ZB-H1
// (Qi et al., ICLR 2024): 1F1B's forwards and input-gradient backwards (B),
// stage s keeping the weight gradients (W) of s micro-batches pending, done
// in the cool-down. DualPipe and DualPipeV: the eight phases of DeepSeek's
// schedule (docs/pipeline_schedules.md).
std::vector<Step> schedule_steps(Schedule schedule, int stage, int pp, int micro_batches,
                                 int chunks);

// schedule_steps with each step's micro-batch replaced by the replica that
// runs it (replica_count): the steps of a stage of the training graph.
std::vector<Step> replica_steps(Schedule schedule, int stage, int pp, int micro_batches,
                                int chunks);

// Peak number of forwards (a micro-batch on one chunk) whose activations
// the steps hold: a forward's until its backward's W when `split`, else its
// backward.
int peak_chunks_in_flight(const std::vector<Step>& steps, bool split);

// Largest number of micro-batches whose activations a stage holds at once,
// in units of one replica's activations on the stage (all its chunks; under
// DualPipe a chunk of each direction). Under the schedules that separate W,
// a micro-batch's activations are held until its W is done.
double activations_in_flight(Schedule schedule, int stage, int pp, int micro_batches, int chunks);

}  // namespace stg::lower
