// The decoder's ends: the input embedding before the first block, the
// output embedding (or layer) and the loss after the last; the reference's
// layers, or Megatron-LM's (models/parts/megatron_embedding.h), tied or not.
#pragma once

#include <string>

#include "stg/graph/graph.h"
#include "stg/models/parts/megatron_parts.h"

namespace stg::models {

// Appends the ends to `g` and links them to the first block's input norm
// and the last block's output residual (`first`, `last`: the blocks' name
// prefixes).
void append_vocabulary(graph::Graph& g, const std::string& first, const std::string& last,
                       bool tpsp, const MegatronParts& megatron);

}  // namespace stg::models
