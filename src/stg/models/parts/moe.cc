#include "stg/models/parts/moe.h"

#include <map>
#include <string>
#include <vector>

#include "stg/models/parts/dims.h"
#include "stg/models/parts/layout.h"
#include "stg/models/parts/mlp.h"

namespace stg::models {
namespace {

using graph::Graph;
using graph::Op;
using graph::Shape;
using namespace typed;

using E = expr::Expr;

// Routes the tokens of one expert in and out of the token buffer
// [B, all, Dmodel]: its share is [B, one, Dmodel] (`batch`: the
// data-parallel share of the expert side).
Graph expert_wrapper(const E& batch, const E& all, const E& one) {
  const Dims& d = dims();
  const Shape tokens = {batch, all, d.hidden}, expert_tokens = {batch, one, d.hidden};
  Graph g;
  input(g, "x", tokens);
  slice(g, "x_expert", "x", 1, one, tokens);
  input(g, "dx_expert", expert_tokens);
  slice(g, "dx", "dx_expert", 1, all, expert_tokens);
  input(g, "y_expert", expert_tokens);
  slice(g, "y", "y_expert", 1, all, expert_tokens);
  input(g, "dy", tokens);
  slice(g, "dy_expert", "dy", 1, one, tokens);
  g.mark_backward({"dx_expert", "dx", "dy", "dy_expert"});
  return g;
}

// One expert: the wrapper around an MLP of `kind` over its share of tokens
// (`renames`: the MLP's symbols as the expert sees them).
Graph expert(const Graph& wrapper, MlpKind kind, const std::map<std::string, E>& renames) {
  Graph g;
  g.append(wrapper, "ldis.", {}, {});
  g.append(mlp(Layout(true), kind), "ffn.", renames, {});
  g.link("ldis.x_expert", "ffn.x0");
  g.link("ffn.xdown", "ldis.y_expert");
  g.link("ldis.dy_expert", "ffn.dxdown");
  g.link("ffn.dx0", "ldis.dx_expert");
  return g;
}

// The experts' MLP symbols: their width of their own, or Dff.
std::map<std::string, E> expert_renames(const ExpertOptions& spec,
                                        std::map<std::string, E> renames) {
  if (spec.own_width) renames.emplace("Dff", dims().ffn_expert);
  return renames;
}

// The later reference's expert: tokens split over cp, tp and ep.
Graph reference_expert(const ExpertOptions& spec) {
  const Dims& d = dims();
  const E all = d.seq * d.k_experts / (d.cp * d.tp * d.ep);
  return expert(expert_wrapper(d.batch_dp, all, all / d.experts),
                spec.gated ? MlpKind::kGated : MlpKind::kPlain,
                expert_renames(spec, {{"Seq", d.seq * d.k_experts / (d.experts * d.ep)}}));
}

// Router, dispatch (x -> xrouted) and combine (yrouted -> y).
Graph moe_frame() {
  const Dims& d = dims();
  const E picked_seq = d.seq * d.k_experts / (d.cp * d.tp);
  const Shape x = {d.batch_dp, d.seq_cp_tp, d.hidden};
  const Shape x_ep = {d.batch_dp, d.seq_cp_tp, d.hidden / d.ep};
  const Shape routed = {d.batch_dp, picked_seq / d.ep, d.hidden};
  const Shape picked = {d.batch_dp, picked_seq, d.hidden / d.ep};
  const Shape scores = {d.batch_dp, d.seq_cp_tp, d.k_experts};
  const Shape scores_flat = {d.batch_dp, picked_seq, c(1)};
  const Shape w = {d.hidden / d.ep, d.k_experts};
  Graph g;
  input(g, "x", x);
  weight(g, "wrouter", w);
  einsum(g, "yrouter", "x", "wrouter", "bsm,mn->bsn", x, {d.hidden, d.k_experts});
  reshape(g, "yrouter2", "yrouter", scores, scores_flat);
  broadcast(g, "x1", "x", 1, d.k_experts, x_ep);
  identity(g, "xrouted", "x1", routed);
  input(g, "yrouted", routed);
  identity(g, "y1", "yrouted", picked);
  slice(g, "yrouter3", "yrouter2", 2, d.hidden / d.ep, scores_flat);
  elementwise2(g, "y2", "y1", "yrouter3", 1, picked);
  broadcast(g, "y", "y2", 1, c(1) / d.k_experts, picked);
  const int b = static_cast<int>(g.size());
  input(g, "dy", x_ep);
  broadcast(g, "dy2", "dy", 1, d.k_experts, x_ep);
  elementwise2(g, "dy1", "dy2", "yrouter3", 1, picked);
  elementwise2(g, "dyrouter3", "dy2", "y1", 1, picked);
  slice(g, "dyrouter2", "dyrouter3", 2, c(1), picked);
  identity(g, "dyrouted", "dy1", routed);
  reshape(g, "dyrouter", "dyrouter2", scores_flat, scores);
  einsum(g, "dwrouter", "dyrouter", "x", "bsn,bsm->mn", scores, x_ep, "wrouter");
  einsum(g, "dx01", "dyrouter", "wrouter", "bsn,mn->bsm", scores, w);
  input(g, "dxrouted", routed);
  identity(g, "dx1", "dxrouted", picked);
  broadcast(g, "dx02", "dx1", 1, c(1) / d.k_experts, picked);
  add_op(g, "dx", "dx01", "dx02", x_ep);
  g.mark_backward_from(b);
  return g;
}

// Megatron-LM's MoE layer (--framework megatron): expert parallelism is
// carved out of data parallelism. Written with `dp` on the token side (each
// rank routes its own Batch/dp sequences; the decoder turns dp into dp·ep,
// the whole data-parallel degree) and `edp` on the expert side (the ranks of
// one expert's data-parallel group: dp). Dispatch and combine are
// all-to-alls over ep, which move the ep split from the sequences to the
// tokens; each rank's Experts/ep experts see Seq·KExperts/Experts tokens per
// sequence of the ep group, gathered over tp (the experts' weights are split
// over tp).
struct CarvedShapes {
  const Dims& d = dims();
  E edp = Dims::sym("edp");
  E picked_seq = d.seq * d.k_experts / (d.cp * d.tp);
  Shape tokens = {d.batch_dp, d.seq_cp_tp, d.hidden};
  Shape picked = {d.batch_dp, picked_seq, d.hidden};
  Shape scores = {d.batch_dp, d.seq_cp_tp, d.experts};
  Shape routed = {d.batch / edp, picked_seq / d.ep, d.hidden};
  Shape w = {d.hidden, d.experts};
};

Graph carved_moe_frame() {
  const CarvedShapes s;
  Graph g;
  input(g, "x", s.tokens);
  weight(g, "wrouter", s.w);
  einsum(g, "scores", "x", "wrouter", "bsm,me->bse", s.tokens, s.w);
  elementwise(g, "probs", "scores", 5, s.scores);  // softmax and top-k
  broadcast(g, "x1", "x", 1, s.d.k_experts, s.tokens);
  identity(g, "xrouted", "x1", s.routed);  // dispatch
  input(g, "yrouted", s.routed);
  identity(g, "y1", "yrouted", s.picked);   // combine
  elementwise(g, "y2", "y1", 1, s.picked);  // times the gate
  broadcast(g, "y", "y2", 1, c(1) / s.d.k_experts, s.picked);
  const int b = static_cast<int>(g.size());
  input(g, "dy", s.tokens, "y");
  broadcast(g, "dy2", "dy", 1, s.d.k_experts, s.tokens);
  elementwise(g, "dy1", "dy2", 1, s.picked);
  identity(g, "dyrouted", "dy1", s.routed);  // dispatch of the gradient
  input(g, "dxrouted", s.routed);
  identity(g, "dx1", "dxrouted", s.picked);  // combine of the gradient
  broadcast(g, "dx02", "dx1", 1, c(1) / s.d.k_experts, s.picked);
  // The gates' gradient (one product per token and expert) and the router's.
  custom(g, "dscores", "dy", s.d.batch_dp * s.d.seq_cp_tp * s.d.experts * c(5), s.tokens, s.scores);
  einsum(g, "dwrouter", "dscores", "x", "bse,bsm->me", s.scores, s.tokens, "wrouter");
  einsum(g, "dx01", "dscores", "wrouter", "bse,me->bsm", s.scores, s.w);
  add_op(g, "dx", "dx01", "dx02", s.tokens);
  g.mark_backward_from(b);
  return g;
}

Graph carved_expert(const ExpertOptions& spec) {
  const CarvedShapes s;
  const E all = s.picked_seq / s.d.ep;
  return expert(
      expert_wrapper(s.d.batch / s.edp, all, s.picked_seq / s.d.experts),
      spec.gated ? MlpKind::kGated : MlpKind::kPlain,
      expert_renames(spec, {{"Seq", s.d.seq * s.d.k_experts / s.d.experts}, {"dp", s.edp}}));
}

// The shared experts, as one gated MLP of SharedExperts x the expert width
// on every token of the rank, beside the routed experts: its output and
// input gradient are added to theirs.
void append_shared_experts(Graph& g, const ExpertOptions& spec) {
  const Dims& d = dims();
  const E width = d.shared_experts * (spec.own_width ? d.ffn_expert : d.ffn);
  const Layout l(true);
  g.append(mlp(l, MlpKind::kGated), "moe.shared.", {{"Dff", width}}, {});
  g.link("moe.x", "moe.shared.x0");
  g.link("moe.dy", "moe.shared.dxdown");
  add_op(g, "moe.y_with_shared", "moe.y", "moe.shared.xdown", l.shape);
  const int b = add_op(g, "moe.dx_with_shared", "moe.dx", "moe.shared.dx0", l.shape);
  g.mark_backward_from(b);
}

// Sums the experts' outputs pairwise; only the last addition is counted as
// work, as in the reference (one element-wise op for the whole reduction).
std::string reduce_chain(Graph& g, const std::vector<std::string>& inputs,
                         const std::string& prefix, bool backward) {
  std::string last = inputs[0];
  const graph::OpResult first = g.result(g.at(inputs[0]));
  for (size_t i = 1; i < inputs.size(); ++i) {
    graph::Tensor t;
    t.name = prefix + std::to_string(i);
    t.op = Op::kElementwise2;
    t.amplifier = i + 1 == inputs.size() ? 1 : 0;
    t.x1 = g.at(last);
    t.x2 = g.at(inputs[i]);
    t.x1_shape = t.x2_shape = first.y_shape;
    t.x1_hidden = t.x2_hidden = first.y_hidden;
    t.phase = backward ? graph::Phase::kBackwardInput : graph::Phase::kForward;
    last = g[g.add(std::move(t))].name;
  }
  return last;
}

}  // namespace

ExpertOptions ExpertOptions::of(const std::vector<int64_t>& o) {
  auto at = [&](size_t i) { return i < o.size() && o[i] != 0; };
  return {at(0), at(1), at(2)};
}

std::vector<int64_t> ExpertOptions::list() const { return {gated, own_width, shared}; }

MoePorts moe_ports(const ExpertOptions& spec) {
  if (spec.shared) return {"moe.y_with_shared", "moe.dx_with_shared"};
  return {"moe.y", "moe.dx"};
}

Graph moe_ffn(const ExpertOptions& spec, int experts_per_rank, bool ep_carved_from_dp) {
  Graph g;
  g.append(ep_carved_from_dp ? carved_moe_frame() : moe_frame(), "moe.", {}, {});
  const Graph one = ep_carved_from_dp ? carved_expert(spec) : reference_expert(spec);
  for (int i = 0; i < experts_per_rank; ++i)
    g.append(one, "moe." + std::to_string(i) + ".", {}, {});
  std::vector<std::string> dx, y;
  for (int i = 0; i < experts_per_rank; ++i) {
    const std::string p = "moe." + std::to_string(i) + ".ldis.";
    g.link("moe.xrouted", p + "x");
    g.link("moe.dyrouted", p + "dy");
    dx.push_back(p + "dx");
    y.push_back(p + "y");
  }
  g.link(reduce_chain(g, dx, "moe.dxrouted_r", true), "moe.dxrouted");
  g.link(reduce_chain(g, y, "moe.yrouted_r", false), "moe.yrouted");
  if (spec.shared) append_shared_experts(g, spec);
  return g;
}

}  // namespace stg::models
