// The seed model ("transformer"): input embedding (Din -> Dmodel),
// num_stacks x (multi-head attention + FFN, each with residual and norm),
// output embedding (Dmodel -> Dout); shapes as the seed's sharding
// spreadsheets write them, with sequence parallelism on `sp`.
#pragma once

#include "stg/models/model.h"

namespace stg::models {

struct TransformerConfig {
  int num_stacks = 32;
  bool weight_sharded = false;  // FSDP: weights sharded over dp (and sp)
};

Model build_transformer(const TransformerConfig& config);

}  // namespace stg::models
