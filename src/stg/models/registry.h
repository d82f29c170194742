// The built-in models' builders, keyed by model kind (names: model_kind.h).
// A new model is one entry here and one in model_kind.cc (README "How to
// add a model").
#pragma once

#include "stg/models/model_kind.h"
#include "stg/models/workload.h"

namespace stg::models {

using WorkloadBuilder = Workload (*)(const Options&, const frameworks::Framework&);

WorkloadBuilder builder_of(ModelKind kind);

// The model of a run: --module_csv, else the builder of its kind, under the
// framework --framework names (chosen here, once; Workload::framework).
Workload build_workload(const Options& o);

}  // namespace stg::models
