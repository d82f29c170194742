// --pipeline_schedule interleaved (Megatron-LM's interleaved 1F1B,
// Narayanan et al. 2021): each stage holds --virtual_stages chunks of
// layers; 1F1B over micro-batch x chunk steps, micro-batches in groups of
// pp, chunks ascending forward and descending backward.
#include <algorithm>

#include "stg/lower/schedule_row.h"
#include "stg/lower/schedules/steps.h"

namespace stg::lower {

namespace {

using graph::Phase;

// The k-th forward (or backward) step.
Step interleaved_step(int k, int pp, int chunks, bool backward) {
  const int group = k / (pp * chunks);
  const int in_group = k % (pp * chunks);
  int chunk = in_group / pp;
  if (backward) chunk = chunks - 1 - chunk;
  return schedules::step(backward ? Phase::kBackwardInput : Phase::kForward,
                         group * pp + in_group % pp, chunk);
}

int warmup_steps(int stage, int pp, int total, int chunks) {
  return std::min(total, (pp - stage - 1) * 2 + (chunks - 1) * pp);
}

class Interleaved final : public ScheduleRow {
 public:
  const char* name() const override { return "interleaved"; }
  int chunks(int virtual_stages) const override { return std::max(1, virtual_stages); }
  bool takes_virtual_stages() const override { return true; }
  bool needs_whole_groups() const override { return true; }
  std::vector<Slot> slots(int stage, int pp, int micro_batches, int chunks) const override {
    const int total = micro_batches * chunks;
    return schedules::one_forward_one_backward(
        warmup_steps(stage, pp, total, chunks), total,
        [&](int k) { return interleaved_step(k, pp, chunks, false); },
        [&](int k) { return interleaved_step(k, pp, chunks, true); });
  }
  double activations_in_flight(int stage, int pp, int micro_batches, int chunks) const override {
    const int total = micro_batches * chunks;
    const int warmup = warmup_steps(stage, pp, total, chunks);
    // Each step holds one chunk, i.e. 1/chunks of the stage's layers.
    return static_cast<double>(std::min(total, warmup + 1)) / chunks;
  }
};

}  // namespace

const ScheduleRow& interleaved_schedule() {
  static const Interleaved row;
  return row;
}

}  // namespace stg::lower
