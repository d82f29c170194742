// The dense MLP part of a block: two matrices (GPT's GeLU MLP), or gated
// (LLaMA's SwiGLU: down(up(x) * gate(x))); weights split over tp.
#pragma once

#include "stg/graph/graph.h"
#include "stg/models/parts/layout.h"

namespace stg::models {

// Two matrices, or gated (up, gate, down; LLaMA's SwiGLU).
enum class MlpKind { kPlain, kGated };

// Tensors: input x0, output xdown, their gradients dxdown and dx0.
graph::Graph mlp(const Layout& l, MlpKind kind);

}  // namespace stg::models
