// Gradient update: every weight w gets `w@1 = w@0 + dw`. Reading dw in the
// weight's own sharding is what makes the dp gradient all-reduce (or, with
// FSDP, the reduce-scatter) appear in lowering.
#pragma once

#include "stg/graph/graph.h"

namespace stg::passes {

// ZeRO stages 1 and 2 (stage 3 is FSDP, a sharding of the weights
// themselves): each data-parallel rank updates only its 1/dp share of every
// weight (dim 0 split over dp), then the updated shares are all-gathered.
// With stage 1 the gradient is first all-reduced in full (then sliced); with
// stage 2 it arrives sharded (reduce-scatter).
struct UpdateOptions {
  int zero_stage = 0;
};

void add_weight_updates(graph::Graph& g, const UpdateOptions& options = {});

}  // namespace stg::passes
