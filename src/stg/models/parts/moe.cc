#include "stg/models/parts/moe.h"

#include <string>
#include <vector>

#include "stg/models/parts/layout.h"
#include "stg/models/parts/mlp.h"

namespace stg::models {
namespace {

using graph::Graph;
using graph::Op;

// Routes the tokens of one expert in and out of the ep-sharded token buffer.
Graph expert_wrapper() {
  constexpr const char* tokens = "Batch/dp, Seq*KExperts/(cp*tp*ep), Dmodel";
  constexpr const char* expert_tokens = "Batch/dp, Seq*KExperts/(Experts*cp*tp*ep), Dmodel";
  constexpr const char* all_size = "Seq*KExperts/(cp*tp*ep)";
  constexpr const char* expert_size = "Seq*KExperts/(Experts*cp*tp*ep)";
  Graph g;
  g.input("x", tokens);
  g.slice("x_expert", "x", 1, expert_size, tokens);
  g.input("dx_expert", expert_tokens);
  g.slice("dx", "dx_expert", 1, all_size, expert_tokens);
  g.input("y_expert", expert_tokens);
  g.slice("y", "y_expert", 1, all_size, expert_tokens);
  g.input("dy", tokens);
  g.slice("dy_expert", "dy", 1, expert_size, tokens);
  g.mark_backward({"dx_expert", "dx", "dy", "dy_expert"});
  return g;
}

// One expert: the wrapper around a two-matrix FFN over its share of tokens.
Graph expert() {
  Graph g;
  g.append(expert_wrapper(), "ldis.", {}, {});
  g.append(mlp(Layout(true), MlpKind::kPlain), "ffn.",
           {{"Seq", expr::Expr::parse("Seq*KExperts/(Experts*ep)")}}, {});
  g.link("ldis.x_expert", "ffn.x0");
  g.link("ffn.xdown", "ldis.y_expert");
  g.link("ldis.dy_expert", "ffn.dxdown");
  g.link("ffn.dx0", "ldis.dx_expert");
  return g;
}

// Router, dispatch (x -> xrouted) and combine (yrouted -> y).
Graph moe_frame() {
  constexpr const char* x = "Batch/dp, Seq/(cp*tp), Dmodel";
  constexpr const char* x_ep = "Batch/dp, Seq/(cp*tp), Dmodel/ep";
  constexpr const char* routed = "Batch/dp, Seq*KExperts/(cp*tp*ep), Dmodel";
  constexpr const char* picked = "Batch/dp, Seq*KExperts/(cp*tp), Dmodel/ep";
  constexpr const char* scores = "Batch/dp, Seq/(cp*tp), KExperts";
  constexpr const char* scores_flat = "Batch/dp, Seq*KExperts/(cp*tp), 1";
  Graph g;
  g.input("x", x);
  g.weight("wrouter", "Dmodel/ep, KExperts");
  g.einsum("yrouter", "x", "wrouter", "bsm,mn->bsn", x, "Dmodel, KExperts");
  g.reshape("yrouter2", "yrouter", scores, scores_flat);
  g.broadcast("x1", "x", 1, "KExperts", x_ep);
  g.identity("xrouted", "x1", routed);
  g.input("yrouted", routed);
  g.identity("y1", "yrouted", picked);
  g.slice("yrouter3", "yrouter2", 2, "Dmodel/ep", scores_flat);
  g.elementwise2("y2", "y1", "yrouter3", 1, picked);
  g.broadcast("y", "y2", 1, "1/KExperts", picked);
  const int b = static_cast<int>(g.size());
  g.input("dy", x_ep);
  g.broadcast("dy2", "dy", 1, "KExperts", x_ep);
  g.elementwise2("dy1", "dy2", "yrouter3", 1, picked);
  g.elementwise2("dyrouter3", "dy2", "y1", 1, picked);
  g.slice("dyrouter2", "dyrouter3", 2, "1", picked);
  g.identity("dyrouted", "dy1", routed);
  g.reshape("dyrouter", "dyrouter2", scores_flat, scores);
  g.einsum("dwrouter", "dyrouter", "x", "bsn,bsm->mn", scores, x_ep, "wrouter");
  g.einsum("dx01", "dyrouter", "wrouter", "bsn,mn->bsm", scores, "Dmodel/ep, KExperts");
  g.input("dxrouted", routed);
  g.identity("dx1", "dxrouted", picked);
  g.broadcast("dx02", "dx1", 1, "1/KExperts", picked);
  g.add_op("dx", "dx01", "dx02", x_ep);
  g.mark_backward_from(b);
  return g;
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

Graph megatron_moe_frame();
Graph megatron_expert();

Graph moe_ffn_impl(int experts_per_rank, bool megatron) {
  Graph g;
  g.append(megatron ? megatron_moe_frame() : moe_frame(), "moe.", {}, {});
  const Graph one = megatron ? megatron_expert() : expert();
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
  return g;
}

// Megatron-LM's MoE layer (--framework megatron): expert parallelism is
// carved out of data parallelism. Written with `dp` on the token side (each
// rank routes its own Batch/dp sequences; build_moe turns dp into dp·ep, the
// whole data-parallel degree) and `edp` on the expert side (the ranks of one
// expert's data-parallel group: dp). Dispatch and combine are all-to-alls
// over ep, which move the ep split from the sequences to the tokens; each
// rank's Experts/ep experts see Seq·KExperts/Experts tokens per sequence of
// the ep group, gathered over tp (the experts' weights are split over tp).
constexpr const char* kTokens = "Batch/dp, Seq/(cp*tp), Dmodel";
constexpr const char* kPicked = "Batch/dp, Seq*KExperts/(cp*tp), Dmodel";
constexpr const char* kScores = "Batch/dp, Seq/(cp*tp), Experts";
constexpr const char* kRouted = "Batch/edp, Seq*KExperts/(cp*tp*ep), Dmodel";

Graph megatron_moe_frame() {
  Graph g;
  g.input("x", kTokens);
  g.weight("wrouter", "Dmodel, Experts");
  g.einsum("scores", "x", "wrouter", "bsm,me->bse", kTokens, "Dmodel, Experts");
  g.elementwise("probs", "scores", 5, kScores);  // softmax and top-k
  g.broadcast("x1", "x", 1, "KExperts", kTokens);
  g.identity("xrouted", "x1", kRouted);  // dispatch
  g.input("yrouted", kRouted);
  g.identity("y1", "yrouted", kPicked);   // combine
  g.elementwise("y2", "y1", 1, kPicked);  // times the gate
  g.broadcast("y", "y2", 1, "1/KExperts", kPicked);
  const int b = static_cast<int>(g.size());
  g.input("dy", kTokens, "y");
  g.broadcast("dy2", "dy", 1, "KExperts", kTokens);
  g.elementwise("dy1", "dy2", 1, kPicked);
  g.identity("dyrouted", "dy1", kRouted);  // dispatch of the gradient
  g.input("dxrouted", kRouted);
  g.identity("dx1", "dxrouted", kPicked);  // combine of the gradient
  g.broadcast("dx02", "dx1", 1, "1/KExperts", kPicked);
  // The gates' gradient (one product per token and expert) and the router's.
  g.custom("dscores", "dy", "Batch/dp*Seq/(cp*tp)*Experts*5", kTokens, kScores);
  g.einsum("dwrouter", "dscores", "x", "bse,bsm->me", kScores, kTokens, "wrouter");
  g.einsum("dx01", "dscores", "wrouter", "bse,me->bsm", kScores, "Dmodel, Experts");
  g.add_op("dx", "dx01", "dx02", kTokens);
  g.mark_backward_from(b);
  return g;
}

Graph megatron_expert() {
  constexpr const char* expert_tokens = "Batch/edp, Seq*KExperts/(Experts*cp*tp), Dmodel";
  constexpr const char* all_size = "Seq*KExperts/(cp*tp*ep)";
  constexpr const char* expert_size = "Seq*KExperts/(Experts*cp*tp)";
  Graph w;
  w.input("x", kRouted);
  w.slice("x_expert", "x", 1, expert_size, kRouted);
  w.input("dx_expert", expert_tokens);
  w.slice("dx", "dx_expert", 1, all_size, expert_tokens);
  w.input("y_expert", expert_tokens);
  w.slice("y", "y_expert", 1, all_size, expert_tokens);
  w.input("dy", kRouted);
  w.slice("dy_expert", "dy", 1, expert_size, kRouted);
  w.mark_backward({"dx_expert", "dx", "dy", "dy_expert"});
  Graph g;
  g.append(w, "ldis.", {}, {});
  g.append(mlp(Layout(true), MlpKind::kPlain), "ffn.",
           {{"Seq", expr::Expr::parse("Seq*KExperts/Experts")}, {"dp", expr::Expr::symbol("edp")}},
           {});
  g.link("ldis.x_expert", "ffn.x0");
  g.link("ffn.xdown", "ldis.y_expert");
  g.link("ldis.dy_expert", "ffn.dxdown");
  g.link("ffn.dx0", "ldis.dx_expert");
  return g;
}

}  // namespace

Graph moe_ffn(int experts_per_rank, bool megatron) {
  return moe_ffn_impl(experts_per_rank, megatron);
}

}  // namespace stg::models
