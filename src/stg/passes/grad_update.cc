#include "stg/passes/grad_update.h"

#include <vector>

namespace stg::passes {

void add_weight_updates(graph::Graph& g) {
  const int n = static_cast<int>(g.size());
  std::vector<int> grad_of_weight(n, -1);
  for (int i = 0; i < n; ++i)
    if (g[i].grad_of >= 0) grad_of_weight[g[i].grad_of] = i;
  for (int w = 0; w < n; ++w) {
    if (!g[w].require_grads) continue;
    const int dw = grad_of_weight[w];
    if (dw < 0) throw graph::GraphError("weight " + g[w].id() + " has no gradient");
    const graph::OpResult& view = g.result(w);
    graph::Tensor u;
    u.name = g[w].name;
    u.revision = g[w].revision + 1;
    u.require_grads = true;
    u.role = graph::Role::kUpdate;
    u.placement = g[w].placement;
    u.op = graph::Op::kAdd;
    u.x1 = w;
    u.x2 = dw;
    u.x1_shape = u.x2_shape = view.y_shape;
    u.x1_hidden = u.x2_hidden = view.y_hidden;
    g.add(std::move(u));
  }
}

}  // namespace stg::passes
