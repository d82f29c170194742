#include "stg/workloads/forward_only.h"

#include "stg/models/workload.h"

namespace stg::workloads {

void ForwardOnly::add_graph_passes(passes::PassManager& pm, const Options& /*o*/,
                                   const models::Workload& w, bool as_template) const {
  add_micro_batches(pm, w, as_template, w.micro_batches);
}

lower::FlatSchedule ForwardOnly::schedule(const lower::LowerOptions& lo) const {
  return {lo.schedule, lo.chunks, phases_, decode_steps_};
}

void ForwardOnly::adjust_lowering(lower::LowerOptions& lo) const {
  lo.tensor_size_moved = true;
  lo.feeder_attributes = true;  // no reference to keep parity with
  lo.order = lower::NodeOrder::kReference;
}

}  // namespace stg::workloads
