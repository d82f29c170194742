#include "stg/models/flat_weights.h"

#include <map>
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
void flatten_group(graph::Graph& g, int original, const std::vector<int>& weights,
                   const std::vector<int>& grads, bool reduce_per_step, const std::string& suffix) {
  Expr total;
  for (int w : weights) total = total + expr::product(g.result(w).y_shape);
  const Shape full = {total};
  const Shape one = {Expr::constant(1)};
  const int revision = g[weights[0]].revision;

  auto make = [&](const std::string& name, Op op, int x1, const Shape& x1_shape,
                  const Shape& x1_hidden) {
    Tensor t;
    t.name = name;
    t.revision = revision;
    t.op = op;
    t.x1 = x1;
    t.x1_shape = x1_shape;
    t.x1_hidden = x1_hidden;
    return t;
  };

  Tensor shard =
      make("_sharded_weight" + suffix, Op::kPlaceholder, -1, {total / Expr::symbol("fsdp")}, one);
  shard.require_grads = true;
  shard.role = graph::Role::kWeight;
  const int sharded = g.add(std::move(shard));
  Tensor assembled_t = make("_assembled_weight" + suffix, Op::kIdentity, sharded, full, one);
  assembled_t.transient = true;
  const int assembled = g.add(std::move(assembled_t));

  // Each weight becomes a free view into the assembled buffer.
  std::vector<Shape> weight_shape(weights.size()), weight_hidden(weights.size());
  for (size_t k = 0; k < weights.size(); ++k) {
    weight_shape[k] = g.result(weights[k]).y_shape;
    weight_hidden[k] = g.result(weights[k]).y_hidden;
    Tensor& w = g.mutable_tensor(weights[k]);
    w.op = Op::kCustom;
    w.factor = Expr();
    w.view = true;
    w.require_grads = false;
    w.role = graph::Role::kActivation;
    w.x1 = assembled;
    w.x2_shape = w.x1_shape;
    w.x2_hidden = w.x1_hidden;
    w.x1_shape = full;
    w.x1_hidden = one;
  }

  const graph::OpResult first_grad = g.result(grads[0]);
  Tensor gathered = make("_assembled_grad" + suffix, Op::kCustom, grads[0], first_grad.y_shape,
                         first_grad.y_hidden);
  gathered.x2_shape = full;
  gathered.x2_hidden = first_grad.y_hidden;
  gathered.extra_deps.assign(grads.begin() + 1, grads.end());
  gathered.transient = true;
  gathered.backward = true;
  const int assembled_grad = g.add(std::move(gathered));
  // The gradient's own shard symbol: ZeRO-2 shards gradients without
  // sharding the weights (bound to dp or 1 like `fsdp`).
  Tensor sharded_grad =
      reduce_per_step
          ? make("_sharded_grad" + suffix, Op::kIdentity, assembled_grad, full, first_grad.y_hidden)
          : make("_sharded_grad" + suffix, Op::kIdentity, assembled_grad,
                 {total / Expr::symbol("gshard")}, one);
  sharded_grad.backward = true;
  sharded_grad.role = graph::Role::kGradient;
  const int sg = g.add(std::move(sharded_grad));
  g.mutable_tensor(sg).grad_of = sharded;
  for (int grad : grads) g.mutable_tensor(grad).grad_of = -1;

  Tensor again = make("_assembled_weight_backward" + suffix, Op::kIdentity, sharded, full, one);
  again.transient = true;
  again.backward = true;
  const int assembled_backward = g.add(std::move(again));
  std::map<int, int> backward_copy;
  for (size_t k = 0; k < weights.size(); ++k) {
    Tensor copy = make("_" + g[weights[k]].name + "_backward" + suffix, Op::kCustom,
                       assembled_backward, full, one);
    copy.x2_shape = weight_shape[k];
    copy.x2_hidden = weight_hidden[k];
    copy.view = true;
    copy.transient = true;
    copy.backward = true;
    backward_copy[weights[k]] = g.add(std::move(copy));
  }
  // The backward pass reads the weights through their backward copies.
  for (int i = 0; i < original; ++i) {
    if (!g[i].backward) continue;
    Tensor& t = g.mutable_tensor(i);
    if (auto it = backward_copy.find(t.x1); it != backward_copy.end()) t.x1 = it->second;
    if (auto it = backward_copy.find(t.x2); it != backward_copy.end()) t.x2 = it->second;
  }
}

}  // namespace

}  // namespace stg::models
