#include "stg/passes/tie_embeddings.h"

#include <algorithm>

#include "stg/passes/insertion.h"

namespace stg::passes {

using graph::Op;
using graph::Tensor;

int tie_embeddings(graph::Graph& g, const std::vector<int>& gradient_of, int group) {
  const int n = static_cast<int>(g.size());
  std::vector<int> sum_of(n, -1);  // tied gradient -> its all-reduce
  int stages = 1;
  for (int i = 0; i < n; ++i) stages = std::max(stages, g[i].stage + 1);
  std::vector<std::vector<int>> links(stages);  // sends and receives by stage
  for (int i = 0; i < n; ++i)
    if (g[i].op == Op::kSend || g[i].op == Op::kRecv) links[g[i].stage].push_back(i);
  Insertions ins(g);
  int count = 0;
  for (int w = 0; w < n; ++w) {
    if (!g[w].tied) continue;
    const int dw = gradient_of[w];
    if (dw < 0) throw graph::GraphError("tied weight " + g[w].id() + " has no gradient");
    const Tensor& grad = g[dw];
    const graph::OpResult& r = g.result(dw);
    Tensor t;
    t.op = Op::kCollective;
    t.name = grad.name + ".tied_sum";
    t.number_at = grad.number_at;
    t.revision = grad.revision;
    t.x1 = dw;
    t.x1_shape = t.x2_shape = r.y_shape;  // the sum has the copy's view
    t.x1_hidden = t.x2_hidden = r.y_hidden;
    t.comm.type = graph::CollType::kAllReduce;
    t.comm.axis = group;
    t.comm.label = grad.id() + "_TIED_SUM";
    t.comm.label_number_at = grad.number_at;
    t.micro_batch = grad.micro_batch;
    t.phase = graph::Phase::kBackwardInput;
    t.placement = grad.placement;
    t.stage = grad.stage;
    t.chunk = grad.chunk;
    t.extra_deps = links[grad.stage];
    t.role = graph::Role::kGradient;
    t.element_bytes = grad.element_bytes;
    sum_of[dw] = ins.after(dw, std::move(t));
    ++count;
  }
  // Everything that read a copy's gradient reads the sum instead.
  for (int i = 0; i < n; ++i) {
    if (g[i].x1 >= 0 && sum_of[g[i].x1] >= 0) g.set_input(i, 1, sum_of[g[i].x1]);
    if (g[i].x2 >= 0 && sum_of[g[i].x2] >= 0) g.set_input(i, 2, sum_of[g[i].x2]);
  }
  ins.apply();
  return count;
}

}  // namespace stg::passes
