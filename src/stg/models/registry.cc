#include "stg/models/registry.h"

#include <stdexcept>

#include "stg/frameworks/registry.h"
#include "stg/models/flag_binding.h"
#include "stg/workloads/training_step.h"

namespace stg::models {

WorkloadBuilder builder_of(ModelKind kind) {
  switch (kind) {
    case ModelKind::kTransformer:
      return transformer_workload;
    case ModelKind::kGpt:
    case ModelKind::kLlama:
    case ModelKind::kMoe:
      return decoder_workload;
  }
  throw std::logic_error("a model kind without a builder");
}

Workload build_workload(const Options& o) {
  const frameworks::Framework& f = frameworks::find(o.framework);
  f.check(o);
  Workload w = o.module_csv.empty() ? builder_of(o.model_kind())(o, f) : csv_workload(o, f);
  w.framework = &f;
  w.kind = &workloads::training_step();
  return w;
}

}  // namespace stg::models
