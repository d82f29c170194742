// --pipeline_schedule dualpipe (DeepSeek-V3 report §3.2): two copies of
// the model run in opposite directions, stage s holding pipeline stage s of
// one and pp-1-s of the mirrored other (passes/mirror_model.h); half the
// micro-batches enter at each end, a forward of one direction overlapped
// with a backward of the other, and W apart from B.
#include "stg/lower/schedule_row.h"
#include "stg/lower/schedules/dualpipe_order.h"

namespace stg::lower {

namespace {

class DualPipe final : public ScheduleRow {
 public:
  const char* name() const override { return "dualpipe"; }
  bool separates_weight_gradients() const override { return true; }
  int chunks(int) const override { return 2; }
  // Chunk 1 is the mirrored copy, not more of the model's layers.
  int model_chunks(int) const override { return 1; }
  bool mirrors_model() const override { return true; }
  // Replica k is micro-batch k on chunk 0 (entering at stage 0) and
  // micro-batch m/2 + k on chunk 1 (entering at stage pp-1).
  int replica_count(int micro_batches) const override { return micro_batches / 2; }
  int micro_batches_of_replicas(int replicas) const override { return 2 * replicas; }
  void to_replicas(std::vector<Step>& steps, int micro_batches) const override {
    for (Step& s : steps) s.micro_batch -= s.chunk * replica_count(micro_batches);
  }
  std::string requirement(int pp, int micro_batches) const override {
    const std::string m = std::to_string(micro_batches), p = std::to_string(pp);
    if (pp % 2 != 0) return "--pipeline_schedule dualpipe needs an even --pp (not " + p + ")";
    if (micro_batches % 2 != 0 || micro_batches < 2 * pp)
      return "--pipeline_schedule dualpipe needs an even number of micro-batches of at least 2 x "
             "--pp = " +
             std::to_string(2 * pp) + " (--batch / --micro_batch = " + m + ")";
    return "";
  }
  std::vector<Slot> slots(int stage, int pp, int micro_batches, int) const override {
    return schedules::dualpipe_slots(false, stage, pp, micro_batches);
  }
  double activations_in_flight(int stage, int pp, int micro_batches, int chunks) const override {
    return schedules::dualpipe_in_flight(*this, stage, pp, micro_batches, chunks);
  }
  int pipeline_position(int pp, int stage, int chunk) const override {
    return chunk == 0 ? stage : pp - 1 - stage;
  }
  int pipeline_length(int pp, int) const override { return pp; }
};

}  // namespace

const ScheduleRow& dualpipe_schedule() {
  static const DualPipe row;
  return row;
}

}  // namespace stg::lower
