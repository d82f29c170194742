#include "stg/passes/grad_update.h"

#include <vector>

namespace stg::passes {

namespace {

using expr::Expr;
using graph::Op;
using graph::Shape;
using graph::Tensor;

Tensor view_of(const graph::Graph& g, int w, const std::string& name, int revision, Op op) {
  Tensor t;
  t.name = name;
  t.revision = revision;
  t.placement = g[w].placement;
  t.micro_batch = -1;  // once per step, after all micro-batches
  t.op = op;
  return t;
}

}  // namespace

void AddWeightUpdates::run(graph::Graph& g, Analyses& a) {
  UpdateOptions options;
  options.zero_stage = zero_stage_;
  options.distributed_optimizer = distributed_optimizer_;
  const int data = a.mesh().find(mesh::AxisKind::kData);
  if (data >= 0) options.data_symbol = a.mesh().axis(data).symbol;
  const int context = a.mesh().find(mesh::AxisKind::kSequence);
  if (shard_over_context_ && data >= 0 && context >= 0 && a.mesh().axis(data).degree > 1 &&
      a.mesh().axis(context).degree > 1)
    options.context_symbol = a.mesh().axis(context).symbol;
  if ((zero_stage_ == 1 || zero_stage_ == 2) && data < 0)
    throw graph::GraphError("ZeRO stage " + std::to_string(zero_stage_) +
                            " needs a data-parallel axis in the mesh");
  add_weight_updates(g, a.gradient_of(g), options);
}

void add_weight_updates(graph::Graph& g, const std::vector<int>& grad_of_weight,
                        const UpdateOptions& options) {
  const int n = static_cast<int>(g.size());
  for (int w = 0; w < n; ++w) {
    if (!g[w].require_grads) continue;
    bool sharded_update = options.zero_stage == 1 || options.zero_stage == 2;
    const int dw = grad_of_weight[w];
    if (dw < 0) throw graph::GraphError("weight " + g[w].id() + " has no gradient");
    const graph::OpResult view = g.result(w);
    Shape shape = view.y_shape;
    Shape hidden = view.y_hidden;
    int grad = dw;
    if (sharded_update && !shape.empty() && !shape[0].has_symbol(options.data_symbol)) {
      shape[0] = shape[0] / Expr::symbol(options.data_symbol);
      if (!options.context_symbol.empty())
        shape[0] = shape[0] / Expr::symbol(options.context_symbol);
      hidden = {Expr::constant(1)};
      if (options.zero_stage == 1 && !options.distributed_optimizer &&
          !g.result(dw).y_hidden.empty()) {
        // Stage 1 keeps the full gradient all-reduce before the update.
        Tensor r = view_of(g, w, g[dw].name + "_reduced", g[dw].revision, Op::kIdentity);
        r.number_at = g[dw].number_at;
        r.x1 = dw;
        r.x1_shape = g.result(dw).y_shape;
        r.x1_hidden = Shape{Expr::constant(1)};
        r.phase = graph::Phase::kBackwardInput;
        grad = g.add(std::move(r));
      }
    } else {
      sharded_update = false;
    }
    Tensor u = view_of(g, w, g[w].name, g[w].revision + 1, Op::kAdd);
    u.require_grads = true;
    u.role = graph::Role::kUpdate;
    u.x1 = w;
    u.x2 = grad;
    u.x1_shape = u.x2_shape = shape;
    u.x1_hidden = u.x2_hidden = hidden;
    const int updated = g.add(std::move(u));
    if (sharded_update) {
      // Every rank needs the whole updated weight for the next step.
      Tensor gathered = view_of(g, w, g[w].name, g[w].revision + 2, Op::kIdentity);
      gathered.x1 = updated;
      gathered.x1_shape = view.y_shape;
      gathered.x1_hidden = view.y_hidden;
      g.add(std::move(gathered));
    }
  }
}

}  // namespace stg::passes
