#include "stg/passes/defer_weight_gradient_gathers.h"

#include <algorithm>
#include <vector>

#include "stg/graph/weight_gradient_work.h"

namespace stg::passes {

using graph::Op;
using graph::Tensor;

namespace {

// A contraction that makes a weight's gradient: dW from the output
// gradient and the layer's input.
bool weight_gradient_contraction(const graph::Graph& g, const Tensor& t) {
  if (t.op != Op::kEinsum || t.x1 < 0 || t.x2 < 0 || !t.is_backward()) return false;
  return t.role == graph::Role::kGradient || (t.grad_of >= 0 && g[t.grad_of].require_grads);
}

// The first collective of the all-gather chain `input` reads through
// identities, when only weight gradients need it; -1 otherwise.
int weight_gradient_gather(const graph::Graph& g, const std::vector<bool>& weight_work, int input) {
  int v = input;
  while (g[v].op == Op::kIdentity && g[v].x1 >= 0) v = g[v].x1;
  if (g[v].op != Op::kCollective || g[v].comm.type != graph::CollType::kAllGather ||
      !weight_work[v])
    return -1;
  while (g[v].x1 >= 0 && g[g[v].x1].op == Op::kCollective && weight_work[g[v].x1]) v = g[v].x1;
  return v;
}

}  // namespace

int defer_weight_gradient_gathers(graph::Graph& g) {
  const std::vector<bool> weight_work = graph::weight_gradient_work(g);
  std::vector<bool> deferred(g.size(), false);
  int count = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const Tensor& t = g[static_cast<int>(i)];
    if (!weight_gradient_contraction(g, t)) continue;
    for (int operand : {1, 2}) {
      const int gather = weight_gradient_gather(g, weight_work, operand == 1 ? t.x1 : t.x2);
      if (gather < 0) continue;
      const int output_gradient = operand == 1 ? t.x2 : t.x1;
      // Extra dependencies do not enter the op's result.
      std::vector<int>& deps = g.mutable_tensor_keep_result(gather).extra_deps;
      if (std::find(deps.begin(), deps.end(), output_gradient) == deps.end())
        deps.push_back(output_gradient);
      if (!deferred[gather]) ++count;
      deferred[gather] = true;
    }
  }
  return count;
}

}  // namespace stg::passes
