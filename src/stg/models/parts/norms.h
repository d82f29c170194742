// A block's norms and residual additions, in the activation layout.
#pragma once

#include "stg/graph/graph.h"
#include "stg/models/parts/layout.h"

namespace stg::models {

// Tensors x, y, dy, dx.
graph::Graph layer_norm(const Layout& l);
// y = x1 + x2; tensors x1, x2, y, dy, dx1, dx2.
graph::Graph residual(const Layout& l);

}  // namespace stg::models
