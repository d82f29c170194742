// The functions of schedule.h, asking the schedule's row
// (schedule_row.h); a stage's template of one micro-batch, and too few
// micro-batches for the schedule, are ordered here for every row.
#include "stg/lower/schedule.h"

#include <algorithm>

#include "stg/lower/schedule_row.h"

namespace stg::lower {

namespace {

using graph::Phase;

// One micro-batch (a flat stage's template; pp 1 when interleaved), or too
// few for the schedule: its chunks forward, then backward in reverse (B
// and, apart, W).
std::vector<Slot> chunks_in_turn(int micro_batches, int chunks, bool split) {
  std::vector<Slot> slots;
  for (int mb = 0; mb < micro_batches; ++mb) {
    for (int c = 0; c < chunks; ++c) slots.push_back({{Phase::kForward, 0, mb, c}});
    for (int c = chunks - 1; c >= 0; --c) {
      slots.push_back({{Phase::kBackwardInput, 0, mb, c}});
      if (split) slots.push_back({{Phase::kBackwardWeight, 0, mb, c}});
    }
  }
  return slots;
}

}  // namespace

bool separates_weight_gradients(Schedule schedule) {
  return schedule->separates_weight_gradients();
}

int schedule_chunks(Schedule schedule, int virtual_stages) {
  return schedule->chunks(virtual_stages);
}

int model_chunks(Schedule schedule, int virtual_stages) {
  return schedule->model_chunks(virtual_stages);
}

int replica_count(Schedule schedule, int micro_batches) {
  return schedule->replica_count(micro_batches);
}

int micro_batches_of_replicas(Schedule schedule, int replicas) {
  return schedule->micro_batches_of_replicas(replicas);
}

bool v_shaped(Schedule schedule) { return schedule->v_shaped(); }

bool mirrors_model(Schedule schedule) { return schedule->mirrors_model(); }

std::string schedule_requirement(Schedule schedule, int pp, int micro_batches) {
  return schedule->requirement(pp, micro_batches);
}

std::vector<Slot> schedule_slots(Schedule schedule, int stage, int pp, int micro_batches,
                                 int chunks) {
  chunks = schedule_chunks(schedule, chunks);
  if (!schedule->orders_passes()) return {};
  if (micro_batches == 1 || !schedule_requirement(schedule, pp, micro_batches).empty())
    return chunks_in_turn(micro_batches, chunks, separates_weight_gradients(schedule));
  return schedule->slots(stage, pp, micro_batches, chunks);
}

std::vector<Step> schedule_steps(Schedule schedule, int stage, int pp, int micro_batches,
                                 int chunks) {
  std::vector<Step> steps;
  for (const Slot& slot : schedule_slots(schedule, stage, pp, micro_batches, chunks))
    steps.insert(steps.end(), slot.begin(), slot.end());
  return steps;
}

std::vector<Step> replica_steps(Schedule schedule, int stage, int pp, int micro_batches,
                                int chunks) {
  std::vector<Step> steps = schedule_steps(schedule, stage, pp, micro_batches, chunks);
  schedule->to_replicas(steps, micro_batches);
  return steps;
}

std::vector<Step> phase_steps(const std::vector<Step>& phases, int micro_batches) {
  std::vector<Step> steps;
  for (const Step& phase : phases)
    for (int mb = 0; mb < micro_batches; ++mb) {
      Step s = phase;
      s.micro_batch = mb;
      steps.push_back(s);
    }
  return steps;
}

int peak_chunks_in_flight(const std::vector<Step>& steps, bool split) {
  int held = 0, peak = 0;
  for (const Step& s : steps) {
    if (s.phase == Phase::kForward) peak = std::max(peak, ++held);
    const Phase frees = split ? Phase::kBackwardWeight : Phase::kBackwardInput;
    if (s.phase == frees) --held;
  }
  return peak;
}

double activations_in_flight(Schedule schedule, int stage, int pp, int micro_batches, int chunks) {
  return schedule->activations_in_flight(stage, pp, micro_batches, chunks);
}

}  // namespace stg::lower
