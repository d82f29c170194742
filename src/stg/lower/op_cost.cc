#include "stg/lower/op_cost.h"

namespace stg::lower {

int64_t element_bytes(const graph::Graph& g, int t, const LowerOptions& o, int override) {
  const int own = !o.tensor_element_bytes ? 0 : override > 0 ? override : g[t].element_bytes;
  return own > 0 ? own : o.bytes_per_element;
}

OpWork op_work(const graph::Graph& g, int t, const LowerOptions& o) {
  const graph::Tensor& x = g[t];
  if (o.kernel_flops && !x.flops.is_zero()) return {&x.flops, 1};
  const graph::OpResult& r = g.result(t);
  return {&r.num_ops, x.op == graph::Op::kEinsum && !r.y_hidden.empty() ? o.flops_per_mac : 1};
}

CommData comm_data(const graph::Graph& g, int t, const LowerOptions& o) {
  const graph::Tensor& x = g[t];
  const int data = graph::carried(g, t);
  // A collective may reduce in a wider type than its input's; a send
  // carries its value as it is.
  const int wider = x.op == graph::Op::kCollective ? x.element_bytes : 0;
  return {data, &*x.x1_shape, element_bytes(g, data, o, wider)};
}

expr::Expr work_expr(const OpWork& w) {
  return w.factor == 1 ? *w.count : *w.count * expr::Expr::constant(w.factor);
}

expr::Expr comm_bytes_expr(const CommData& c) {
  return expr::product(*c.shape) * expr::Expr::constant(c.element_bytes);
}

}  // namespace stg::lower
