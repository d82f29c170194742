// The seed's transformer: not a decoder of blocks (models/transformer.h).
#include "stg/models/families/family.h"

namespace stg::models {

const Family& transformer_family() {
  static const Family f = [] {
    Family f;
    f.name = "transformer";
    f.summary = "the seed's transformer (default)";
    f.workload = transformer_workload;
    return f;
  }();
  return f;
}

}  // namespace stg::models
