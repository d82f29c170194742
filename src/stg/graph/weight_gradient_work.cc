#include "stg/graph/weight_gradient_work.h"

#include <algorithm>

namespace stg::graph {

std::vector<bool> weight_gradient_work(const Graph& g) {
  const int n = static_cast<int>(g.size());
  std::vector<std::vector<int>> readers(n);
  for (int i = 0; i < n; ++i) {
    for (int input : {g[i].x1, g[i].x2})
      if (input >= 0) readers[input].push_back(i);
    for (int d : g[i].extra_deps)
      if (d >= 0) readers[d].push_back(i);
  }
  std::vector<bool> w(n, false);
  for (int i = 0; i < n; ++i)
    w[i] = g[i].is_backward() &&
           (phase_of(g, i) == Phase::kBackwardWeight || g[i].role == Role::kGradient);
  // Within a part of the model only: the activation gradient a block hands
  // to the block before it is B even where that block's backward ends in a
  // weight gradient (the input embedding's).
  auto same_part = [&](int a, int b) {
    const Placement &x = g[a].placement, &y = g[b].placement;
    return x.kind == y.kind && (x.kind != Placement::Kind::kBlock || x.block == y.block);
  };
  // Readers usually come after what they read: one pass from the end
  // settles it, a second finds nothing new.
  for (bool changed = true; changed;) {
    changed = false;
    for (int i = n - 1; i >= 0; --i) {
      if (w[i] || !g[i].is_backward() || readers[i].empty()) continue;
      w[i] = std::all_of(readers[i].begin(), readers[i].end(),
                         [&](int r) { return w[r] && same_part(i, r); });
      changed = changed || w[i];
    }
  }
  return w;
}

}  // namespace stg::graph
