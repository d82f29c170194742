// The dense MLP part of a block: two matrices (GPT's GeLU MLP), or gated
// (LLaMA's SwiGLU: down(up(x) * gate(x))); weights split over tp.
#pragma once

#include "stg/graph/graph.h"
#include "stg/models/blocks/block_spec.h"
#include "stg/models/parts/layout.h"

namespace stg::models {

// Tensors: input x0, output xdown, their gradients dxdown and dx0.
graph::Graph mlp(const Layout& l, MlpKind kind);

}  // namespace stg::models
