#include "stg/passes/sum_mirrored_gradients.h"

#include <algorithm>
#include <tuple>

#include "stg/passes/gradient_sum.h"
#include "stg/passes/insertion.h"

namespace stg::passes {

using graph::Op;
using graph::Tensor;

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
      Tensor t = gradient_all_reduce(g, grad, group, ".mirror_sum", "_MIRROR_SUM");
      if (previous < 0)
        t.extra_deps = flush[s];
      else
        t.extra_deps = {previous};
      previous = sum_of[grad] = ins.after(grad, std::move(t));
      ++count;
    }
  }
  // Everything that read a copy's gradient reads the sum instead.
  read_gradient_sums(g, sum_of);
  ins.apply();
  return count;
}

}  // namespace stg::passes
