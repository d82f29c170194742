#include "stg/passes/sum_mirrored_gradients.h"

#include <algorithm>
#include <tuple>

#include "stg/passes/insertion.h"

namespace stg::passes {

using graph::Op;
using graph::Tensor;

namespace {

// The all-reduce of gradient `grad` (the accumulated gradient, or the sum
// that already reads it) over the two copies' stages.
Tensor mirror_sum(const graph::Graph& g, int grad, int group) {
  const Tensor& x = g[grad];
  const graph::OpResult& r = g.result(grad);
  Tensor t;
  t.op = Op::kCollective;
  t.name = x.name + ".mirror_sum";
  t.number_at = x.number_at;
  t.revision = x.revision;
  t.x1 = grad;
  t.x1_shape = t.x2_shape = r.y_shape;  // the sum has the copy's view
  t.x1_hidden = t.x2_hidden = r.y_hidden;
  t.comm.type = graph::CollType::kAllReduce;
  t.comm.axis = group;
  t.comm.label = x.id() + "_MIRROR_SUM";
  t.comm.label_number_at = x.number_at;
  t.micro_batch = x.micro_batch;
  t.phase = graph::Phase::kBackwardInput;
  t.placement = x.placement;
  t.stage = x.stage;
  t.chunk = x.chunk;
  t.role = graph::Role::kGradient;
  t.element_bytes = x.element_bytes;
  return t;
}

}  // namespace

int sum_mirrored_gradients(graph::Graph& g, const std::vector<int>& gradient_of, int first_group,
                           int pp) {
  const int n = static_cast<int>(g.size());
  // What each stage's sums wait for: its sends, receives and collectives.
  std::vector<std::vector<int>> flush(pp);
  // A gradient already summed by a collective (a tied embedding's): the sum.
  std::vector<int> summed_by(n, -1);
  for (int i = 0; i < n; ++i) {
    const Tensor& t = g[i];
    if (!graph::is_comm(t.op)) continue;
    if (t.stage < 0 || t.stage >= pp)
      throw graph::GraphError("sum-mirrored-gradients: " + t.id() + " is on no stage of the run");
    flush[t.stage].push_back(i);
    if (t.op == Op::kCollective && t.role == graph::Role::kGradient && t.x1 >= 0)
      summed_by[t.x1] = i;
  }
  // Per stage: (pipeline stage of the copy, graph index, gradient to sum).
  std::vector<std::vector<std::tuple<int, int, int>>> sums(pp);
  for (int w = 0; w < n; ++w) {
    const Tensor& t = g[w];
    if (t.op != Op::kPlaceholder || t.role != graph::Role::kWeight || !t.require_grads) continue;
    int grad = gradient_of[w];
    if (grad < 0) throw graph::GraphError("weight " + t.id() + " has no gradient");
    while (summed_by[grad] >= 0) grad = summed_by[grad];
    const int position = t.chunk == 0 ? t.stage : pp - 1 - t.stage;
    sums[t.stage].emplace_back(position, w, grad);
  }
  Insertions ins(g);
  std::vector<int> sum_of(n, -1);
  int count = 0;
  for (int s = 0; s < pp; ++s) {
    std::sort(sums[s].begin(), sums[s].end());
    const int group = first_group + std::min(s, pp - 1 - s);
    int previous = -1;
    for (const auto& [position, weight, grad] : sums[s]) {
      Tensor t = mirror_sum(g, grad, group);
      if (previous < 0)
        t.extra_deps = flush[s];
      else
        t.extra_deps = {previous};
      previous = sum_of[grad] = ins.after(grad, std::move(t));
      ++count;
    }
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
