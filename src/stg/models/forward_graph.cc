#include "stg/models/forward_graph.h"

#include <vector>

namespace stg::models {

using graph::Graph;
using graph::Op;
using graph::Role;
using graph::Tensor;

namespace {

bool forward(const Tensor& t) {
  return !t.is_backward() && t.role != Role::kGradient && t.role != Role::kUpdate &&
         t.role != Role::kOptimizer;
}

}  // namespace

Graph forward_part(const Graph& g) {
  const int n = static_cast<int>(g.size());
  std::vector<bool> keep(n);
  for (int i = 0; i < n; ++i) keep[i] = forward(g[i]);
  // A view into a flat weight buffer becomes the weight it views; the buffer
  // (its assembled copy and the shard it is assembled from) goes.
  std::vector<Tensor> views(n);
  for (int i = 0; i < n; ++i) {
    const Tensor& t = g[i];
    if (!keep[i] || !t.view || t.op != Op::kCustom) continue;
    Tensor w = t;
    w.op = Op::kPlaceholder;
    w.x1 = -1;
    w.x1_shape = t.x2_shape;
    w.x1_hidden = t.x2_hidden;
    w.x2_shape.reset();
    w.x2_hidden.reset();
    w.factor = expr::Expr();
    w.view = false;
    w.role = Role::kWeight;
    views[i] = std::move(w);
    for (int buffer = t.x1; buffer >= 0; buffer = g[buffer].x1) {
      keep[buffer] = false;
      if (g[buffer].op == Op::kPlaceholder) break;
    }
  }
  std::vector<int> index(n, -1);
  int next = 0;
  for (int i = 0; i < n; ++i)
    if (keep[i]) index[i] = next++;
  Graph out;
  out.reserve(static_cast<size_t>(next));
  for (int i = 0; i < n; ++i) {
    if (!keep[i]) continue;
    Tensor t = views[i].name.empty() ? g[i] : std::move(views[i]);
    auto map = [&](int& ref) {
      if (ref < 0) return;
      if (index[ref] < 0)
        throw graph::GraphError("forward tensor " + t.id() + " reads " + g[ref].id() +
                                ", which is not part of the forward pass");
      ref = index[ref];
    };
    map(t.x1);
    map(t.x2);
    map(t.succeeds);
    for (int& d : t.extra_deps) map(d);
    t.grad_of = -1;
    if (t.op == Op::kPlaceholder && t.require_grads) t.role = Role::kWeight;
    t.require_grads = false;
    t.selective_recompute = false;
    out.add(std::move(t));
  }
  return out;
}

}  // namespace stg::models
