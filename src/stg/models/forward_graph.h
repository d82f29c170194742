// The forward pass of a model's graph, for a serving workload
// (models/inference_decoder.h): the backward pass, gradients and updates
// dropped, and the weights of FSDP's flat buffer (models/flat_weights.h)
// turned back into the weights they are views of. Weights are served, not
// trained: no weight requires a gradient.
#pragma once

#include "stg/graph/graph.h"

namespace stg::models {

// Throws graph::GraphError when a forward tensor reads a dropped one.
graph::Graph forward_part(const graph::Graph& g);

}  // namespace stg::models
