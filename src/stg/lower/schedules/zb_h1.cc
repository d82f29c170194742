// --pipeline_schedule zb-h1 (Qi et al., "Zero Bubble Pipeline
// Parallelism", ICLR 2024): 1F1B with B (activation gradients) in place of
// the whole backward; stage s keeps the W (weight gradients) of s
// micro-batches pending, which fills the cool-down bubble of 1F1B (the
// first stage, waiting longest for gradients, defers none), so no stage
// holds more than pp micro-batches' activations.
#include <algorithm>
#include <deque>

#include "stg/lower/schedule_row.h"
#include "stg/lower/schedules/steps.h"

namespace stg::lower {

namespace {

using graph::Phase;
using schedules::step;

std::vector<Step> zb_h1_steps(int stage, int pp, int micro_batches) {
  std::vector<Step> steps;
  std::deque<int> pending;
  auto backward = [&](int mb) {
    steps.push_back(step(Phase::kBackwardInput, mb, 0));
    pending.push_back(mb);
    if (static_cast<int>(pending.size()) > stage) {
      steps.push_back(step(Phase::kBackwardWeight, pending.front(), 0));
      pending.pop_front();
    }
  };
  const int warmup = std::min(micro_batches, pp - stage - 1);
  for (int k = 0; k < warmup; ++k) steps.push_back(step(Phase::kForward, k, 0));
  for (int k = 0; k < micro_batches - warmup; ++k) {
    steps.push_back(step(Phase::kForward, warmup + k, 0));
    backward(k);
  }
  for (int k = micro_batches - warmup; k < micro_batches; ++k) backward(k);
  for (int mb : pending) steps.push_back(step(Phase::kBackwardWeight, mb, 0));
  return steps;
}

class ZbH1 final : public ScheduleRow {
 public:
  const char* name() const override { return "zb-h1"; }
  bool separates_weight_gradients() const override { return true; }
  std::vector<Slot> slots(int stage, int pp, int micro_batches, int) const override {
    return schedules::single(zb_h1_steps(stage, pp, micro_batches));
  }
  // Counted along the order: a micro-batch's activations are held until
  // its W is done.
  double activations_in_flight(int stage, int pp, int micro_batches, int chunks) const override {
    return peak_chunks_in_flight(schedule_steps(*this, stage, pp, micro_batches, chunks), true);
  }
};

}  // namespace

const ScheduleRow& zb_h1_schedule() {
  static const ZbH1 row;
  return row;
}

}  // namespace stg::lower
