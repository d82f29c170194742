// The family registry (models/families/) names each family's workload
// builder; fuzz_hf_config reads configs only, so it links these stand-ins
// instead of the whole model and pass library.
#include <stdexcept>

#include "stg/models/workload.h"

namespace stg::models {

Workload transformer_workload(const Options&, const DecoderPolicy&) {
  throw std::logic_error("fuzz_hf_config builds no workload");
}

Workload decoder_workload(const Options&, const DecoderPolicy&) {
  throw std::logic_error("fuzz_hf_config builds no workload");
}

}  // namespace stg::models
