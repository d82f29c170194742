// The attention kernel's dimensions, shared by the kernels of every
// context-parallel algorithm (attention.h, context_parallel.h).
#pragma once

#include <optional>

#include "stg/models/parts/dims.h"

namespace stg::models {

// Per-head widths of the queries and keys and of the values, and the
// key/value heads on a tp rank.
struct KernelDims {
  expr::Expr qk_dim, v_dim, kv_heads_tp;
  bool grouped = false;  // fewer key/value heads than query heads
  // The keys each query is charged for, without and with the causal saving
  // (unset: the whole sequence, and its causal half). A mixer row of a
  // windowed attention sets both (the all-gather and Ulysses kernels read
  // them; the ring's chunks are of the whole sequence).
  std::optional<expr::Expr> keys = {}, causal_keys = {};
};

// KernelDims::keys or causal_keys, or their defaults Seq and Seq/2.
inline expr::Expr charged_keys(const KernelDims& k, bool causal_saving) {
  if (causal_saving) return k.causal_keys.value_or(dims().seq / c(2));
  return k.keys.value_or(dims().seq);
}

}  // namespace stg::models
