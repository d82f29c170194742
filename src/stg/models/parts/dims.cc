#include "stg/models/parts/dims.h"

namespace stg::models {

const Dims& dims() {
  static const Dims d;
  return d;
}

namespace typed {
namespace {

using graph::Graph;
using graph::Op;
using graph::Shape;

const Shape& one() {
  static const Shape s = {expr::Expr::constant(1)};
  return s;
}

// An op reading x1 (and x2) in the given views, as Graph::op does.
int op_views(Graph& g, const std::string& name, Op op, const std::string& x1, const std::string& x2,
             const Shape* x1_shape, const Shape* x2_shape) {
  graph::Tensor t;
  t.name = name;
  t.op = op;
  t.x1 = x1.empty() ? -1 : g.at(x1);
  t.x2 = x2.empty() ? -1 : g.at(x2);
  if (x1_shape) {
    t.x1_shape = *x1_shape;
    t.x1_hidden = one();
  }
  if (x2_shape) {
    t.x2_shape = *x2_shape;
    t.x2_hidden = one();
  }
  return g.add(std::move(t));
}

int with_grad(Graph& g, int i, const std::string& grad_of) {
  if (!grad_of.empty()) g.grad_of(grad_of);
  return i;
}

}  // namespace

int input(Graph& g, const std::string& name, const Shape& shape, const std::string& grad_of) {
  return with_grad(g, op_views(g, name, Op::kPlaceholder, "", "", &shape, nullptr), grad_of);
}

int weight(Graph& g, const std::string& name, const Shape& shape) {
  const int i = input(g, name, shape);
  graph::Tensor& t = g.mutable_tensor_keep_result(i);
  t.require_grads = true;
  t.role = graph::Role::kWeight;
  return i;
}

int einsum(Graph& g, const std::string& name, const std::string& x1, const std::string& x2,
           const std::string& spec, const Shape& x1_shape, const Shape& x2_shape,
           const std::string& grad_of) {
  const int i = op_views(g, name, Op::kEinsum, x1, x2, &x1_shape, &x2_shape);
  g.mutable_tensor(i).einsum = spec;
  with_grad(g, i, grad_of);
  const int of = g[i].grad_of;
  if (of >= 0 && g[of].role == graph::Role::kWeight)
    g.mutable_tensor_keep_result(i).role = graph::Role::kGradient;
  return i;
}

int elementwise(Graph& g, const std::string& name, const std::string& x1,
                expr::Rational ops_per_element, const Shape& shape, const std::string& grad_of) {
  const int i = op_views(g, name, Op::kElementwise, x1, "", &shape, nullptr);
  g.mutable_tensor(i).amplifier = ops_per_element;
  return with_grad(g, i, grad_of);
}

int identity(Graph& g, const std::string& name, const std::string& x1, const Shape& shape,
             const std::string& grad_of) {
  return with_grad(g, op_views(g, name, Op::kIdentity, x1, "", &shape, nullptr), grad_of);
}

int add_op(Graph& g, const std::string& name, const std::string& x1, const std::string& x2,
           const Shape& shape, const std::string& grad_of) {
  return with_grad(g, op_views(g, name, Op::kAdd, x1, x2, &shape, &shape), grad_of);
}

int op(Graph& g, const std::string& name, Op op, const std::string& x1, const std::string& x2,
       const Shape& x1_shape, const Shape* x2_shape, const Shape& x1_hidden,
       const Shape& x2_hidden) {
  const int i = op_views(g, name, op, x1, x2, &x1_shape, x2_shape);
  graph::Tensor& t = g.mutable_tensor(i);
  t.x1_hidden = x1_hidden;
  if (x2_shape) t.x2_hidden = x2_hidden;
  return i;
}

int slice(Graph& g, const std::string& name, const std::string& x1, int axis,
          const expr::Expr& size, const Shape& x1_shape) {
  const int i = op_views(g, name, Op::kSlice, x1, "", &x1_shape, nullptr);
  g.mutable_tensor(i).axis = axis;
  g.mutable_tensor(i).factor = size;
  return i;
}

int slice(Graph& g, const std::string& name, const std::string& x1, int axis,
          const expr::Expr& size, const Shape& x1_shape, const std::string& x2,
          const Shape& x2_shape) {
  const int i = op_views(g, name, Op::kSlice, x1, x2, &x1_shape, &x2_shape);
  g.mutable_tensor(i).axis = axis;
  g.mutable_tensor(i).factor = size;
  return i;
}

int custom(Graph& g, const std::string& name, const std::string& x1, const expr::Expr& num_ops,
           const Shape& x1_shape, const Shape& out_shape, const Shape& out_hidden) {
  const int i = op(g, name, Op::kCustom, x1, "", x1_shape, &out_shape, one(), out_hidden);
  g.mutable_tensor(i).factor = num_ops;
  return i;
}

int custom(Graph& g, const std::string& name, const std::string& x1, const expr::Expr& num_ops,
           const Shape& x1_shape, const Shape& out_shape) {
  return custom(g, name, x1, num_ops, x1_shape, out_shape, one());
}

int reshape(Graph& g, const std::string& name, const std::string& x1, const Shape& from_shape,
            const Shape& to_shape) {
  return op_views(g, name, Op::kReshape, x1, "", &from_shape, &to_shape);
}

int broadcast(Graph& g, const std::string& name, const std::string& x1, int axis,
              const expr::Expr& factor, const Shape& x1_shape) {
  const int i = op_views(g, name, Op::kBroadcast, x1, "", &x1_shape, nullptr);
  g.mutable_tensor(i).axis = axis;
  g.mutable_tensor(i).factor = factor;
  return i;
}

int elementwise2(Graph& g, const std::string& name, const std::string& x1, const std::string& x2,
                 expr::Rational ops_per_element, const Shape& shape) {
  const int i = op_views(g, name, Op::kElementwise2, x1, x2, &shape, &shape);
  g.mutable_tensor(i).amplifier = ops_per_element;
  return i;
}

void flops(Graph& g, const expr::Expr& flops) {
  g.mutable_tensor(static_cast<int>(g.size()) - 1).flops = flops;
}

}  // namespace typed
}  // namespace stg::models
