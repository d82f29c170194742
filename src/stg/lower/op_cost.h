// What one op of the graph costs, as lowering charges it: the compute work
// of a compute node (num_ops), the data a collective or a send moves
// (comm_size) and the element size a tensor is sized with. One rule each,
// for every place that counts: lowering evaluates them at a run's values
// (lower_stage.cc), `stg plans` keeps them as expressions of its free
// symbols (sweep/plan_template.cc). A rule names the expression and the
// whole factor to multiply it by, so each caller evaluates it its own way
// (lowering with its overflow errors and caches, the sweep symbolically).
#pragma once

#include <cstdint>

#include "stg/expr/expr.h"
#include "stg/graph/graph.h"
#include "stg/lower/lower_stage.h"

namespace stg::lower {

// Size of one element of tensor t's data in the trace's units: t's own
// element size (Tensor::element_bytes, or `override` when > 0: a
// collective reducing in a wider type) when the units size tensors by
// their own type, else the run's bytes_per_element.
int64_t element_bytes(const graph::Graph& g, int t, const LowerOptions& o, int override = 0);

// A compute op's work: `count` times `factor`. A contraction's
// multiply-accumulate is flops_per_mac FLOPs (an einsum without contracted
// dims, an element-wise product, is one multiply per element); a custom
// kernel with its own FLOP count (Tensor::flops) charges that in physical
// units.
struct OpWork {
  const expr::Expr* count = nullptr;  // the op's num_ops or its own flops
  int64_t factor = 1;
};
OpWork op_work(const graph::Graph& g, int t, const LowerOptions& o);

// What a collective, send or recv t moves: the elements of `shape` of
// tensor `data` (the value it carries), each of `element_bytes`.
struct CommData {
  int data = -1;
  const graph::Shape* shape = nullptr;
  int64_t element_bytes = 1;
};
CommData comm_data(const graph::Graph& g, int t, const LowerOptions& o);

// The same as expressions: the work's FLOPs and the bytes moved.
expr::Expr work_expr(const OpWork& w);
expr::Expr comm_bytes_expr(const CommData& c);

}  // namespace stg::lower
