#include "stg/passes/tie_embeddings.h"

#include <algorithm>

#include "stg/passes/gradient_sum.h"
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
    Tensor t = gradient_all_reduce(g, dw, group, ".tied_sum", "_TIED_SUM");
    t.extra_deps = links[g[dw].stage];
    sum_of[dw] = ins.after(dw, std::move(t));
    ++count;
  }
  // Everything that read a copy's gradient reads the sum instead.
  read_gradient_sums(g, sum_of);
  ins.apply();
  return count;
}

}  // namespace stg::passes
