// The model of a run: its family's workload builder (families/registry.h),
// or a --module_csv sheet, under the run's framework.
#pragma once

#include "stg/models/workload.h"

namespace stg::models {

// The model of a run: --module_csv, else the builder of its family, under
// the framework --framework names (chosen here, once; Workload::framework).
Workload build_workload(const Options& o);

}  // namespace stg::models
