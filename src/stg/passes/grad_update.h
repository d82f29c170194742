// Gradient update: every weight w gets `w@1 = w@0 + dw`. Reading dw in the
// weight's own sharding is what makes the dp gradient all-reduce (or, with
// FSDP, the reduce-scatter) appear in lowering.
#pragma once

#include "stg/graph/graph.h"

namespace stg::passes {

void add_weight_updates(graph::Graph& g);

}  // namespace stg::passes
