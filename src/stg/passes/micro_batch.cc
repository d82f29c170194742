#include "stg/passes/micro_batch.h"

#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "stg/graph/weight_gradient_work.h"

namespace stg::passes {

using expr::Expr;
using graph::Graph;
using graph::Op;
using graph::Tensor;

namespace {

using Results = std::vector<std::shared_ptr<const graph::OpResult>>;

// Where each tensor of the original graph stands in the replicated one: the
// weights once, first; every other tensor once per micro-batch after them.
class Layout {
 public:
  explicit Layout(const Graph& g) {
    const int n = static_cast<int>(g.size());
    is_weight_.assign(n, false);
    slot_.assign(n, -1);
    shared_.assign(n, -1);
    // Weights are shared, trained or not (a forward-only workload's).
    for (int i = 0; i < n; ++i) {
      is_weight_[i] =
          g[i].op == Op::kPlaceholder && (g[i].require_grads || g[i].role == graph::Role::kWeight);
      if (is_weight_[i])
        ++num_weights_;
      else
        slot_[i] = per_copy_++;
    }
  }
  bool is_weight(int i) const { return is_weight_[i]; }
  int num_weights() const { return num_weights_; }
  int per_copy() const { return per_copy_; }
  // Weight i stands at `index` of the replicated graph.
  void share(int i, int index) { shared_[i] = index; }
  int shared(int i) const { return shared_[i]; }
  // Index of tensor i's copy in micro-batch mb (a weight's one place).
  int copy_of(int i, int mb) const {
    return is_weight_[i] ? shared_[i] : num_weights_ + mb * per_copy_ + slot_[i];
  }

 private:
  std::vector<bool> is_weight_;
  std::vector<int> slot_;    // index within a micro-batch's copy
  std::vector<int> shared_;  // weight -> its index in the replicated graph
  int num_weights_ = 0;
  int per_copy_ = 0;
};

void add_shared_weights(const Graph& g, Layout& layout, Graph& out) {
  for (int i = 0; i < static_cast<int>(g.size()); ++i) {
    if (!layout.is_weight(i)) continue;
    Tensor w = g[i];
    w.micro_batch = -1;  // shared by all micro-batches
    w.x1 = w.x2 = w.grad_of = -1;
    w.extra_deps.clear();
    layout.share(i, out.add(std::move(w)));
  }
}

// The replicas differ from the original only in names and references:
// rename its symbols once (each distinct expression once) and let every
// copy share the renamed views and their op result.
Results rename_once(Graph& g, const Layout& layout, const std::map<std::string, Expr>& renames) {
  graph::RenameMemo memo;
  Results result(g.size());
  for (int i = 0; i < static_cast<int>(g.size()); ++i) {
    if (layout.is_weight(i)) continue;
    graph::rename_symbols(g.mutable_tensor(i), renames, &memo);
    result[i] = g.shared_result(i);
  }
  return result;
}

// What the accumulated gradients need of the originals, kept before the
// last replica takes the tensors: gradient -> its name, phase and place.
std::map<int, Tensor> gradient_headers(const Graph& g, const std::map<int, int>& grad_of_weight) {
  std::map<int, Tensor> headers;
  for (const auto& [weight, grad] : grad_of_weight) {
    Tensor h;
    h.name = g[grad].name;
    h.revision = g[grad].revision;
    h.phase = g[grad].phase;
    h.phase_step = g[grad].phase_step;
    h.placement = g[grad].placement;
    headers[grad] = std::move(h);
  }
  return headers;
}

// Micro-batch mb's copy of every tensor but the weights. The last replica
// (`take`) takes the tensors of `g` instead of copying them.
void add_replica(Graph& g, int mb, bool take, bool as_template, const Layout& layout,
                 const Results& result, const std::vector<bool>& weight_work, Graph& out) {
  const std::string prefix = "mb" + std::to_string(mb) + ".";
  for (int i = 0; i < static_cast<int>(g.size()); ++i) {
    if (layout.is_weight(i)) continue;
    // (Not a ?: with g[i]: its common type with the moved tensor is a const copy.)
    Tensor t;
    if (!take) {
      t = g[i];
    } else {
      t = std::move(g.mutable_tensor(i));
    }
    t.name = prefix + t.name;
    if (as_template) t.number_at = 2;  // "mb0."
    t.step_at = graph::number_after(t.step_at, prefix.size());
    t.micro_batch = mb;
    auto map = [&](int& ref) {
      if (ref >= 0) ref = layout.copy_of(ref, mb);
    };
    map(t.x1);
    map(t.x2);
    map(t.succeeds);
    for (int& d : t.extra_deps) map(d);
    // Per-micro-batch gradients are no longer the weights' gradients; the
    // backward's weight part keeps its phase (graph::weight_gradient_work),
    // which a zero-bubble schedule runs apart.
    if (weight_work[i]) t.phase = graph::Phase::kBackwardWeight;
    if (t.grad_of >= 0)
      t.grad_of = layout.is_weight(t.grad_of) ? -1 : layout.copy_of(t.grad_of, mb);
    out.add(std::move(t), result[i]);
  }
}

// One accumulated gradient of `grad`'s copies, named like the original
// gradient (`original`, its header).
Tensor accumulated_gradient(const Graph& out, const Layout& layout, int grad, int count,
                            const Tensor& original) {
  const int first = layout.copy_of(grad, 0);
  const graph::OpResult view = out.result(first);
  Tensor sum;
  sum.name = original.name;
  sum.revision = original.revision;
  sum.op = Op::kCustom;
  sum.factor = expr::product(view.y_shape);  // one addition per element
  sum.x1 = first;
  sum.x1_shape = sum.x2_shape = view.y_shape;
  sum.x1_hidden = sum.x2_hidden = view.y_hidden;
  for (int mb = 1; mb < count; ++mb) sum.extra_deps.push_back(layout.copy_of(grad, mb));
  sum.phase = original.phase;
  sum.phase_step = original.phase_step;
  sum.micro_batch = -1;  // after all micro-batches
  sum.role = graph::Role::kGradient;
  sum.placement = original.placement;
  return sum;
}

}  // namespace

Graph replicate_micro_batches(Graph g, int count, const std::map<std::string, Expr>& renames,
                              const std::vector<int>& gradient_of, bool as_template) {
  if (as_template && count != 1)
    throw std::logic_error("replicate_micro_batches: a template has one micro-batch");
  Layout layout(g);
  std::map<int, int> grad_of_weight;  // weight -> its gradient
  for (int i = 0; i < static_cast<int>(g.size()); ++i)
    if (layout.is_weight(i) && gradient_of[i] >= 0) grad_of_weight[i] = gradient_of[i];

  Graph out;
  out.reserve(layout.num_weights() + static_cast<size_t>(count) * layout.per_copy() +
              grad_of_weight.size());
  add_shared_weights(g, layout, out);
  const Results result = rename_once(g, layout, renames);
  const std::map<int, Tensor> headers = gradient_headers(g, grad_of_weight);
  const std::vector<bool> weight_work = graph::weight_gradient_work(g);
  for (int mb = 0; mb < count; ++mb)
    add_replica(g, mb, mb + 1 == count, as_template, layout, result, weight_work, out);
  for (const auto& [weight, grad] : grad_of_weight) {
    const int index = out.add(accumulated_gradient(out, layout, grad, count, headers.at(grad)));
    out.mutable_tensor(index).grad_of = layout.shared(weight);
  }
  return out;
}

}  // namespace stg::passes
