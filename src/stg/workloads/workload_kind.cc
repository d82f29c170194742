#include "stg/workloads/workload_kind.h"

#include <memory>

#include "stg/models/workload.h"
#include "stg/passes/micro_batch.h"

namespace stg::workloads {

void add_micro_batches(passes::PassManager& pm, const models::Workload& w, bool as_template,
                       int replicas) {
  if (w.micro_batch_renames.empty()) return;
  if (as_template)
    pm.add(std::make_unique<passes::ReplicateMicroBatches>(
        passes::ReplicateMicroBatches::template_of(w.micro_batch_renames)));
  else
    pm.emplace<passes::ReplicateMicroBatches>(replicas, w.micro_batch_renames);
}

}  // namespace stg::workloads
