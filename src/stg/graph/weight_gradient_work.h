// Which backward work only the weight gradients need: the W part that a
// zero-bubble or DualPipe schedule runs apart from the rest of the backward,
// B (the activation gradients, on the critical path to the previous stage).
#pragma once

#include <vector>

#include "stg/graph/graph.h"

namespace stg::graph {

// Per tensor: a weight's gradient (grad_of a trainable weight:
// graph::phase_of; or a tensor of role kGradient, such as a slice of a flat
// gradient), or a backward tensor read only by such tensors of the same part
// of the model (block, first or last part).
std::vector<bool> weight_gradient_work(const Graph& g);

}  // namespace stg::graph
