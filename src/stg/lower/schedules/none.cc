// --pipeline_schedule none: the order of the passes left to the simulator
// (no ctrl_deps between steps); every micro-batch's activations may be
// held at once.
#include "stg/lower/schedule_row.h"

namespace stg::lower {

namespace {

class NoSchedule final : public ScheduleRow {
 public:
  const char* name() const override { return "none"; }
  const char* help() const override { return "order left to the simulator"; }
  bool orders_passes() const override { return false; }
  std::vector<Slot> slots(int, int, int, int) const override { return {}; }
  double activations_in_flight(int, int, int micro_batches, int) const override {
    return micro_batches;
  }
};

}  // namespace

const ScheduleRow& none_schedule() {
  static const NoSchedule row;
  return row;
}

}  // namespace stg::lower
