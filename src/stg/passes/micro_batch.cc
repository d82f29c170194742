#include "stg/passes/micro_batch.h"

#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

namespace stg::passes {

using expr::Expr;
using graph::Graph;
using graph::Op;
using graph::Tensor;

Graph replicate_micro_batches(Graph g, int count, const std::map<std::string, Expr>& renames,
                              const std::vector<int>& gradient_of, bool as_template) {
  if (as_template && count != 1)
    throw std::logic_error("replicate_micro_batches: a template has one micro-batch");
  const int n = static_cast<int>(g.size());
  std::vector<bool> is_weight(n, false);
  std::map<int, int> grad_of_weight;  // weight -> its gradient
  // Weights are shared, trained or not (a forward-only workload's).
  for (int i = 0; i < n; ++i)
    is_weight[i] =
        g[i].op == Op::kPlaceholder && (g[i].require_grads || g[i].role == graph::Role::kWeight);
  for (int i = 0; i < n; ++i)
    if (is_weight[i] && gradient_of[i] >= 0) grad_of_weight[i] = gradient_of[i];
  int num_weights = 0;
  for (bool w : is_weight) num_weights += w;
  const int per_copy = n - num_weights;

  Graph out;
  out.reserve(num_weights + static_cast<size_t>(count) * per_copy + grad_of_weight.size());
  std::vector<int> shared(n, -1);  // weight -> its index in `out`
  for (int i = 0; i < n; ++i) {
    if (!is_weight[i]) continue;
    Tensor w = g[i];
    w.micro_batch = -1;  // shared by all micro-batches
    w.x1 = w.x2 = w.grad_of = -1;
    w.extra_deps.clear();
    shared[i] = out.add(std::move(w));
  }
  // Index of tensor i's copy in micro-batch mb (weights excluded).
  std::vector<int> slot(n, -1);
  for (int i = 0, k = 0; i < n; ++i)
    if (!is_weight[i]) slot[i] = k++;
  auto copy_of = [&](int i, int mb) {
    return is_weight[i] ? shared[i] : num_weights + mb * per_copy + slot[i];
  };

  // The replicas differ from the original only in names and references:
  // rename its symbols once (each distinct expression once) and let every
  // copy share the renamed views and their op result.
  graph::RenameMemo memo;
  std::vector<std::shared_ptr<const graph::OpResult>> result(n);
  for (int i = 0; i < n; ++i) {
    if (is_weight[i]) continue;
    graph::rename_symbols(g.mutable_tensor(i), renames, &memo);
    result[i] = g.shared_result(i);
  }
  // What the accumulated gradients need of the originals, kept before the
  // last replica takes the tensors.
  std::map<int, Tensor> grad_header;
  for (const auto& [weight, grad] : grad_of_weight) {
    Tensor h;
    h.name = g[grad].name;
    h.revision = g[grad].revision;
    h.phase = g[grad].phase;
    h.phase_step = g[grad].phase_step;
    h.placement = g[grad].placement;
    grad_header[grad] = std::move(h);
  }
  for (int mb = 0; mb < count; ++mb) {
    const std::string prefix = "mb" + std::to_string(mb) + ".";
    for (int i = 0; i < n; ++i) {
      if (is_weight[i]) continue;
      // The last replica takes the tensors instead of copying them. (Not a
      // ?: with g[i]: its common type with the moved tensor is a const copy.)
      Tensor t;
      if (mb + 1 < count) {
        t = g[i];
      } else {
        t = std::move(g.mutable_tensor(i));
      }
      t.name = prefix + t.name;
      if (as_template) t.number_at = 2;  // "mb0."
      t.micro_batch = mb;
      auto map = [&](int& ref) {
        if (ref >= 0) ref = copy_of(ref, mb);
      };
      map(t.x1);
      map(t.x2);
      for (int& d : t.extra_deps) map(d);
      // Per-micro-batch gradients are no longer the weights' gradients.
      if (t.grad_of >= 0) t.grad_of = is_weight[t.grad_of] ? -1 : copy_of(t.grad_of, mb);
      out.add(std::move(t), result[i]);
    }
  }

  // One accumulated gradient per weight, named like the original gradient.
  for (const auto& [weight, grad] : grad_of_weight) {
    const int first = copy_of(grad, 0);
    const graph::OpResult view = out.result(first);
    Tensor sum;
    const Tensor& original = grad_header.at(grad);
    sum.name = original.name;
    sum.revision = original.revision;
    sum.op = Op::kCustom;
    sum.factor = expr::product(view.y_shape);  // one addition per element
    sum.x1 = first;
    sum.x1_shape = sum.x2_shape = view.y_shape;
    sum.x1_hidden = sum.x2_hidden = view.y_hidden;
    for (int mb = 1; mb < count; ++mb) sum.extra_deps.push_back(copy_of(grad, mb));
    sum.phase = original.phase;
    sum.phase_step = original.phase_step;
    sum.micro_batch = -1;  // after all micro-batches
    sum.role = graph::Role::kGradient;
    sum.placement = original.placement;
    const int index = out.add(std::move(sum));
    out.mutable_tensor(index).grad_of = shared[weight];
  }
  return out;
}

}  // namespace stg::passes
