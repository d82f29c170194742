// The workload of a run: the framework --framework names (chosen here,
// once; models::Workload::framework), the model its builder makes
// (models/registry.h), and what the trace models (models::Workload::kind).
#pragma once

#include "stg/models/workload.h"
#include "stg/options.h"

namespace stg::workloads {

// UsageError on bad flags: the limits, the framework's checks, then the
// model's.
models::Workload build_workload(const Options& o);

// Sets `w.kind`: forward-only when the builder described such a run
// (models::Workload::forward_run), else a training step.
void choose_kind(models::Workload& w);

}  // namespace stg::workloads
