#include "stg/models/registry.h"

#include <stdexcept>

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
  if (!o.module_csv.empty()) return csv_workload(o);
  return builder_of(o.model_kind())(o);
}

}  // namespace stg::models
