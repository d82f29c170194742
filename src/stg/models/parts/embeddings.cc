#include "stg/models/parts/embeddings.h"

#include "stg/models/parts/layout.h"
#include "stg/models/parts/megatron_embedding.h"

namespace stg::models {
namespace {

using graph::Graph;

expr::Expr sym(const char* name) { return expr::Expr::symbol(name); }

Graph embedding(bool tpsp) {
  // With tpsp the tokens are split over tp; without, the input features are.
  const char* x = tpsp ? "Batch/dp, Seq/(cp*tp), Din" : "Batch/dp, Seq/cp, Din/tp";
  const char* dy = tpsp ? "Batch/dp, Seq/(cp*tp), Dout" : "Batch/dp, Seq/cp, Dout";
  const char* w = tpsp ? "Din, Dout" : "Din/tp, Dout";
  Graph g;
  g.input("x", x);
  g.weight("w", w);
  g.einsum("y", "x", "w", "bsm,mn->bsn", x, w);
  const int b = static_cast<int>(g.size());
  g.input("dy", dy, "y");
  g.einsum("dw", "dy", "x", "bsn,bsm->mn", dy, x, "w");
  g.einsum("dx", "dy", "w", "bsn,mn->bsm", dy, w, "x");
  g.mark_backward_from(b);
  return g;
}

Graph loss(const Layout& l) {
  Graph g;
  g.input("y", l.act);
  g.elementwise("loss", "y", 5, l.act);
  g.elementwise("dy", "loss", 5, l.act);
  g.mark_backward_from(2);
  return g;
}

// The reference's vocabulary layers: an input and an output embedding
// (matrix products) and the loss.
void append_reference_vocabulary(Graph& g, const std::string& first, const std::string& last,
                                 bool tpsp) {
  using Kind = graph::Placement::Kind;
  const Graph emb = embedding(tpsp);
  g.append(emb, "in_emb.", {{"Din", sym("Dvocal")}, {"Dout", sym("Dmodel")}}, {Kind::kFirst, 0});
  g.append(emb, "out_emb.", {{"Din", sym("Dmodel")}, {"Dout", sym("Dvocal")}}, {Kind::kLast, 0});
  g.link("in_emb.y", first + "input_norm.x");
  g.link(first + "input_norm.dx", "in_emb.dy");
  g.link(last + "ffn_res.y", "out_emb.x");
  g.link("out_emb.dx", last + "ffn_res.dy");
  g.append(loss(Layout(tpsp)), "loss.", {}, {Kind::kLast, 0});
  g.link("out_emb.y", "loss.y");
  g.link("loss.dy", "out_emb.dy");
}

// Megatron-LM's vocabulary layers around the blocks. Tied on one stage: the
// output layer reads the input embedding's weight and the weight's gradient
// is the sum of both uses. Tied on stages apart: each end holds a copy,
// marked tied (the tie-embeddings pass sums their gradients once per step).
void append_megatron_vocabulary(Graph& g, const std::string& first, const std::string& last,
                                bool tpsp, const MegatronParts& megatron) {
  using Kind = graph::Placement::Kind;
  g.append(megatron_input_embedding(), "in_emb.", {}, {Kind::kFirst, 0});
  g.append(megatron_output_layer(tpsp), "out_emb.", {}, {Kind::kLast, 0});
  g.link("in_emb.y", first + "input_norm.x");
  g.link(first + "input_norm.dx", "in_emb.dy");
  g.link(last + "ffn_res.y", "out_emb.x");
  g.link("out_emb.dx", last + "ffn_res.dy");
  if (!megatron.tie_embeddings) return;
  if (megatron.tied_stages_apart) {
    g.mutable_tensor(g.at("in_emb.w")).tied = true;
    g.mutable_tensor(g.at("out_emb.w")).tied = true;
    return;
  }
  g.link("in_emb.w", "out_emb.w");
  graph::Tensor& shared = g.mutable_tensor_keep_result(g.at("out_emb.w"));
  shared.require_grads = false;  // a view of the input embedding's weight
  shared.role = graph::Role::kActivation;
  const graph::Placement first_stage = g[g.at("in_emb.dw")].placement;
  const int sum = g.op("in_emb.dw_tied", graph::Op::kAdd, "in_emb.dw", "out_emb.dw",
                       "Dvocal/tp, Dmodel", "Dvocal/tp, Dmodel", "1/(cp*dp)", "1/(cp*dp)");
  graph::Tensor& t = g.mutable_tensor_keep_result(sum);
  t.placement = first_stage;
  t.phase = graph::Phase::kBackwardInput;
  g.mutable_tensor_keep_result(g.at("in_emb.dw")).grad_of = -1;
  g.mutable_tensor_keep_result(g.at("out_emb.dw")).grad_of = -1;
  g.mutable_tensor_keep_result(sum).grad_of = g.at("in_emb.w");
}

}  // namespace

void append_vocabulary(Graph& g, const std::string& first, const std::string& last, bool tpsp,
                       const MegatronParts& megatron) {
  if (megatron.enabled)
    append_megatron_vocabulary(g, first, last, tpsp, megatron);
  else
    append_reference_vocabulary(g, first, last, tpsp);
}

}  // namespace stg::models
