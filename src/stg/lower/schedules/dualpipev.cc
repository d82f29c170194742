// --pipeline_schedule dualpipev (DualPipe's "cut-in-half" V shape,
// DeepSeek's DualPipe repository): the model's 2pp stages in a V, chunk 0
// of stage s pipeline stage s and chunk 1 pipeline stage 2pp-1-s, ordered
// as DualPipe with W apart from B.
#include "stg/lower/schedule_row.h"
#include "stg/lower/schedules/dualpipe_order.h"

namespace stg::lower {

namespace {

class DualPipeV final : public ScheduleRow {
 public:
  const char* name() const override { return "dualpipev"; }
  bool separates_weight_gradients() const override { return true; }
  int chunks(int) const override { return 2; }
  bool v_shaped() const override { return true; }
  // The two chunks per stage are the schedule's, not a flag's.
  std::string chunks_text(int64_t pp, int) const override {
    return "--pipeline_schedule dualpipev puts 2 chunks on each stage: --pp " + std::to_string(pp) +
           " x 2";
  }
  std::string requirement(int pp, int micro_batches) const override {
    if (micro_batches >= 2 * pp) return "";
    return "--pipeline_schedule dualpipev needs at least 2 x --pp = " + std::to_string(2 * pp) +
           " micro-batches (--batch / --micro_batch = " + std::to_string(micro_batches) + ")";
  }
  std::vector<Slot> slots(int stage, int pp, int micro_batches, int) const override {
    return schedules::dualpipe_slots(true, stage, pp, micro_batches);
  }
  double activations_in_flight(int stage, int pp, int micro_batches, int chunks) const override {
    return schedules::dualpipe_in_flight(*this, stage, pp, micro_batches, chunks);
  }
  int pipeline_position(int pp, int stage, int chunk) const override {
    return chunk == 0 ? stage : 2 * pp - 1 - stage;
  }
};

}  // namespace

const ScheduleRow& dualpipev_schedule() {
  static const DualPipeV row;
  return row;
}

}  // namespace stg::lower
