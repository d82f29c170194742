// --pipeline_schedule gpipe (Huang et al., GPipe): a stage runs all its
// forwards, then all its backwards, so it holds every micro-batch's
// activations.
#include "stg/lower/schedule_row.h"
#include "stg/lower/schedules/steps.h"

namespace stg::lower {

namespace {

using graph::Phase;
using schedules::step;

class Gpipe final : public ScheduleRow {
 public:
  const char* name() const override { return "gpipe"; }
  std::vector<Slot> slots(int, int, int micro_batches, int) const override {
    std::vector<Step> steps;
    for (int k = 0; k < micro_batches; ++k) steps.push_back(step(Phase::kForward, k, 0));
    for (int k = 0; k < micro_batches; ++k) steps.push_back(step(Phase::kBackwardInput, k, 0));
    return schedules::single(steps);
  }
  double activations_in_flight(int, int, int micro_batches, int) const override {
    return micro_batches;
  }
};

}  // namespace

const ScheduleRow& gpipe_schedule() {
  static const Gpipe row;
  return row;
}

}  // namespace stg::lower
