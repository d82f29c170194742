#include "stg/models/flat_weights.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace stg::models {

using expr::Expr;
using graph::Op;
using graph::Shape;
using graph::Tensor;

namespace {
void flatten_group(graph::Graph& g, int original, const std::vector<int>& weights,
                   const std::vector<int>& grads, bool reduce_per_step, const std::string& suffix);
}  // namespace

void flatten_block_weights(graph::Graph& g, bool reduce_per_step,
                           const std::string& expert_symbol) {
  const int original = static_cast<int>(g.size());
  std::map<int, int> grad_of_weight;
  for (int i = 0; i < original; ++i)
    if (g[i].grad_of >= 0) grad_of_weight[g[i].grad_of] = i;
  std::vector<int> weights, grads;
  for (int i = 0; i < original; ++i) {
    if (g[i].op != Op::kPlaceholder || !g[i].require_grads) continue;
    auto grad = grad_of_weight.find(i);
    if (grad == grad_of_weight.end()) throw graph::GraphError(g[i].id() + " has no gradient");
    weights.push_back(i);
    grads.push_back(grad->second);
  }
  if (weights.empty()) return;
  if (expert_symbol.empty()) {
    flatten_group(g, original, weights, grads, reduce_per_step, "");
    return;
  }
  // Two buckets: weights whose gradient is summed over the expert-data-
  // parallel ranks (the experts) and the others.
  std::vector<int> w_dense, g_dense, w_expert, g_expert;
  for (size_t k = 0; k < weights.size(); ++k) {
    bool expert = false;
    for (const Expr& e : g.result(grads[k]).y_hidden)
      expert = expert || e.has_symbol(expert_symbol);
    (expert ? w_expert : w_dense).push_back(weights[k]);
    (expert ? g_expert : g_dense).push_back(grads[k]);
  }
  if (!w_dense.empty()) flatten_group(g, original, w_dense, g_dense, reduce_per_step, "");
  if (!w_expert.empty())
    flatten_group(g, original, w_expert, g_expert, reduce_per_step, "_experts");
}

namespace {

// One bucket of weights being flattened: its flat buffer's size and the
// tensors it adds (all of the weights' revision, named with `suffix`).
struct FlatGroup {
  FlatGroup(graph::Graph& graph, const std::vector<int>& weights, const std::string& suffix)
      : g(graph), suffix(suffix), revision(graph[weights[0]].revision) {
    for (int w : weights) total = total + expr::product(g.result(w).y_shape);
    full = {total};
  }

  Tensor make(const std::string& name, Op op, int x1, const Shape& x1_shape,
              const Shape& x1_hidden) const {
    Tensor t;
    t.name = name + suffix;
    t.revision = revision;
    t.op = op;
    t.x1 = x1;
    t.x1_shape = x1_shape;
    t.x1_hidden = x1_hidden;
    return t;
  }

  graph::Graph& g;
  const std::string suffix;
  const int revision;
  Expr total;
  Shape full;
  const Shape one = {Expr::constant(1)};
  int sharded = -1;  // the weight shard, the one weight left
};

// The weight shard and its assembled buffer; each weight becomes a free
// view into the buffer. Returns the weights' views (shape, hidden) as they
// were.
std::vector<std::pair<Shape, Shape>> add_weight_buffer(FlatGroup& f,
                                                       const std::vector<int>& weights) {
  graph::Graph& g = f.g;
  Tensor shard =
      f.make("_sharded_weight", Op::kPlaceholder, -1, {f.total / Expr::symbol("fsdp")}, f.one);
  shard.require_grads = true;
  shard.role = graph::Role::kWeight;
  f.sharded = g.add(std::move(shard));
  Tensor assembled_t = f.make("_assembled_weight", Op::kIdentity, f.sharded, f.full, f.one);
  assembled_t.transient = true;
  const int assembled = g.add(std::move(assembled_t));
  std::vector<std::pair<Shape, Shape>> views(weights.size());
  for (size_t k = 0; k < weights.size(); ++k) {
    views[k] = {g.result(weights[k]).y_shape, g.result(weights[k]).y_hidden};
    Tensor& w = g.mutable_tensor(weights[k]);
    w.op = Op::kCustom;
    w.factor = Expr();
    w.view = true;
    w.require_grads = false;
    w.role = graph::Role::kActivation;
    w.x1 = assembled;
    w.x2_shape = w.x1_shape;
    w.x2_hidden = w.x1_hidden;
    w.x1_shape = f.full;
    w.x1_hidden = f.one;
  }
  return views;
}

// The gradients assembled into one buffer and its shard, the gradient of
// the weight shard (the weights' own gradients are no longer theirs).
void add_gradient_buffer(FlatGroup& f, const std::vector<int>& grads, bool reduce_per_step) {
  graph::Graph& g = f.g;
  const graph::OpResult first_grad = g.result(grads[0]);
  Tensor gathered =
      f.make("_assembled_grad", Op::kCustom, grads[0], first_grad.y_shape, first_grad.y_hidden);
  gathered.x2_shape = f.full;
  gathered.x2_hidden = first_grad.y_hidden;
  gathered.extra_deps.assign(grads.begin() + 1, grads.end());
  gathered.transient = true;
  gathered.phase = graph::Phase::kBackwardInput;
  const int assembled_grad = g.add(std::move(gathered));
  // The gradient's own shard symbol: ZeRO-2 shards gradients without
  // sharding the weights (bound to dp or 1 like `fsdp`).
  Tensor sharded_grad = reduce_per_step ? f.make("_sharded_grad", Op::kIdentity, assembled_grad,
                                                 f.full, first_grad.y_hidden)
                                        : f.make("_sharded_grad", Op::kIdentity, assembled_grad,
                                                 {f.total / Expr::symbol("gshard")}, f.one);
  sharded_grad.phase = graph::Phase::kBackwardInput;
  sharded_grad.role = graph::Role::kGradient;
  const int sg = g.add(std::move(sharded_grad));
  g.mutable_tensor(sg).grad_of = f.sharded;
  for (int grad : grads) g.mutable_tensor(grad).grad_of = -1;
}

// The backward pass (of the first `original` tensors) reads the weights
// through copies out of a second assembled buffer.
void add_backward_copies(FlatGroup& f, int original, const std::vector<int>& weights,
                         const std::vector<std::pair<Shape, Shape>>& views) {
  graph::Graph& g = f.g;
  Tensor again = f.make("_assembled_weight_backward", Op::kIdentity, f.sharded, f.full, f.one);
  again.transient = true;
  again.phase = graph::Phase::kBackwardInput;
  const int assembled_backward = g.add(std::move(again));
  std::map<int, int> backward_copy;
  for (size_t k = 0; k < weights.size(); ++k) {
    Tensor copy = f.make("_" + g[weights[k]].name + "_backward", Op::kCustom, assembled_backward,
                         f.full, f.one);
    copy.x2_shape = views[k].first;
    copy.x2_hidden = views[k].second;
    copy.view = true;
    copy.transient = true;
    copy.phase = graph::Phase::kBackwardInput;
    backward_copy[weights[k]] = g.add(std::move(copy));
  }
  for (int i = 0; i < original; ++i) {
    if (!g[i].is_backward()) continue;
    Tensor& t = g.mutable_tensor(i);
    if (auto it = backward_copy.find(t.x1); it != backward_copy.end()) t.x1 = it->second;
    if (auto it = backward_copy.find(t.x2); it != backward_copy.end()) t.x2 = it->second;
  }
}

void flatten_group(graph::Graph& g, int original, const std::vector<int>& weights,
                   const std::vector<int>& grads, bool reduce_per_step, const std::string& suffix) {
  FlatGroup f(g, weights, suffix);
  const std::vector<std::pair<Shape, Shape>> views = add_weight_buffer(f, weights);
  add_gradient_buffer(f, grads, reduce_per_step);
  add_backward_copies(f, original, weights, views);
}

}  // namespace

}  // namespace stg::models
