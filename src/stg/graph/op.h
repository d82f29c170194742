// Shape, partial-sum ("hidden") and operation-count rules of each op
// (docs/facts.md §2). One function per op, all in op.cc.
#pragma once

#include <stdexcept>

#include "stg/graph/tensor.h"

namespace stg::graph {

class GraphError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OpResult {
  Shape y_shape;
  Shape y_hidden;      // partial-sum factors of the output
  expr::Expr num_ops;  // multiply-accumulates or element operations
};

// Evaluates the op of `t` symbolically; throws GraphError naming the tensor
// when its input shapes are inconsistent with the op.
OpResult evaluate_op(const Tensor& t);

}  // namespace stg::graph
