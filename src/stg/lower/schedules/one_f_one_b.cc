// --pipeline_schedule 1f1b (Megatron-LM's PipeDream-Flush): stage s runs
// pp-s-1 warm-up forwards, then one forward and one backward alternating,
// then the remaining backwards; it holds at most pp-s micro-batches'
// activations.
#include <algorithm>

#include "stg/lower/schedule_row.h"
#include "stg/lower/schedules/steps.h"

namespace stg::lower {

namespace {

using graph::Phase;
using schedules::step;

class OneFOneB final : public ScheduleRow {
 public:
  const char* name() const override { return "1f1b"; }
  std::vector<Slot> slots(int stage, int pp, int micro_batches, int) const override {
    return schedules::one_forward_one_backward(
        std::min(micro_batches, pp - stage - 1), micro_batches,
        [](int k) { return step(Phase::kForward, k, 0); },
        [](int k) { return step(Phase::kBackwardInput, k, 0); });
  }
  double activations_in_flight(int stage, int pp, int micro_batches, int) const override {
    return std::min(micro_batches, pp - stage);
  }
};

}  // namespace

const ScheduleRow& one_f_one_b_schedule() {
  static const OneFOneB row;
  return row;
}

}  // namespace stg::lower
