// The attention kernel's dimensions, shared by the kernels of every
// context-parallel algorithm (attention.h, context_parallel.h).
#pragma once

#include "stg/expr/expr.h"

namespace stg::models {

// Per-head widths of the queries and keys and of the values, and the
// key/value heads on a tp rank.
struct KernelDims {
  expr::Expr qk_dim, v_dim, kv_heads_tp;
  bool grouped = false;  // fewer key/value heads than query heads
};

}  // namespace stg::models
