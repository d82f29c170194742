#include "stg/models/parts/embeddings.h"

#include <map>
#include <string>

#include "stg/models/parts/dims.h"
#include "stg/models/parts/layout.h"
#include "stg/models/parts/vocab_parallel_embedding.h"

namespace stg::models {
namespace {

using graph::Graph;

expr::Expr sym(const char* name) { return expr::Expr::symbol(name); }

}  // namespace

Graph reference_embedding(bool tpsp) {
  using namespace typed;
  const Dims& d = dims();
  const expr::Expr din = Dims::sym("Din"), dout = Dims::sym("Dout");
  // With tpsp the tokens are split over tp; without, the input features are.
  const graph::Shape x = tpsp ? graph::Shape{d.batch_dp, d.seq_cp_tp, din}
                              : graph::Shape{d.batch_dp, d.seq_cp, din / d.tp};
  const graph::Shape dy = {d.batch_dp, tpsp ? d.seq_cp_tp : d.seq_cp, dout};
  const graph::Shape w = {tpsp ? din : din / d.tp, dout};
  Graph g;
  input(g, "x", x);
  weight(g, "w", w);
  einsum(g, "y", "x", "w", "bsm,mn->bsn", x, w);
  const int b = static_cast<int>(g.size());
  input(g, "dy", dy, "y");
  einsum(g, "dw", "dy", "x", "bsn,bsm->mn", dy, x, "w");
  einsum(g, "dx", "dy", "w", "bsn,mn->bsm", dy, w, "x");
  g.mark_backward_from(b);
  return g;
}

Graph reference_loss(const Layout& l) {
  using namespace typed;
  Graph g;
  input(g, "y", l.shape);
  elementwise(g, "loss", "y", 5, l.shape);
  elementwise(g, "dy", "loss", 5, l.shape);
  g.mark_backward_from(2);
  return g;
}

namespace {

// The reference's vocabulary layers: an input and an output embedding
// (matrix products) and the loss.
void append_reference_vocabulary(Graph& g, const std::string& first, const std::string& last,
                                 bool tpsp) {
  using Kind = graph::Placement::Kind;
  const Graph emb = reference_embedding(tpsp);
  g.append(emb, "in_emb.", {{"Din", sym("Dvocal")}, {"Dout", sym("Dmodel")}}, {Kind::kFirst, 0});
  g.append(emb, "out_emb.", {{"Din", sym("Dmodel")}, {"Dout", sym("Dvocal")}}, {Kind::kLast, 0});
  g.link("in_emb.y", first + "input_norm.x");
  g.link(first + "input_norm.dx", "in_emb.dy");
  g.link(last + "ffn_res.y", "out_emb.x");
  g.link("out_emb.dx", last + "ffn_res.dy");
  g.append(reference_loss(Layout(tpsp)), "loss.", {}, {Kind::kLast, 0});
  g.link("out_emb.y", "loss.y");
  g.link("loss.dy", "out_emb.dy");
}

// Megatron-LM's vocabulary layers around the blocks. Tied on one stage: the
// output layer reads the input embedding's weight and the weight's gradient
// is the sum of both uses. Tied on stages apart: each end holds a copy,
// marked tied (the tie-embeddings pass sums their gradients once per step).
void append_vocab_parallel_layers(Graph& g, const std::string& first, const std::string& last,
                                  bool tpsp, const PartChoices& choices) {
  using Kind = graph::Placement::Kind;
  g.append(vocab_parallel_input_embedding(), "in_emb.", {}, {Kind::kFirst, 0});
  g.append(vocab_parallel_output_layer(tpsp), "out_emb.", {}, {Kind::kLast, 0});
  g.link("in_emb.y", first + "input_norm.x");
  g.link(first + "input_norm.dx", "in_emb.dy");
  g.link(last + "ffn_res.y", "out_emb.x");
  g.link("out_emb.dx", last + "ffn_res.dy");
  if (!choices.tie_embeddings) return;
  if (choices.tied_stages_apart) {
    g.mutable_tensor(g.at("in_emb.w")).tied = true;
    g.mutable_tensor(g.at("out_emb.w")).tied = true;
    return;
  }
  g.link("in_emb.w", "out_emb.w");
  graph::Tensor& shared = g.mutable_tensor_keep_result(g.at("out_emb.w"));
  shared.require_grads = false;  // a view of the input embedding's weight
  shared.role = graph::Role::kActivation;
  const graph::Placement first_stage = g[g.at("in_emb.dw")].placement;
  const Dims& d = dims();
  const graph::Shape w = {d.vocab_tp, d.hidden}, partial = {c(1) / (d.cp * d.dp)};
  const int sum = typed::op(g, "in_emb.dw_tied", graph::Op::kAdd, "in_emb.dw", "out_emb.dw", w, &w,
                            partial, partial);
  graph::Tensor& t = g.mutable_tensor_keep_result(sum);
  t.placement = first_stage;
  t.phase = graph::Phase::kBackwardInput;
  g.mutable_tensor_keep_result(g.at("in_emb.dw")).grad_of = -1;
  g.mutable_tensor_keep_result(g.at("out_emb.dw")).grad_of = -1;
  g.mutable_tensor_keep_result(sum).grad_of = g.at("in_emb.w");
}

}  // namespace

void append_serving_vocabulary(Graph& g, const std::string& first, const std::string& last,
                               bool tpsp, const PartChoices& choices, bool last_token) {
  using Kind = graph::Placement::Kind;
  using namespace typed;
  const Dims& d = dims();
  // The output embedding sees one token per sequence.
  const std::map<std::string, expr::Expr> one_token = {{"Seq", c(1)}};
  std::string logits;
  expr::Expr vocab;  // of the rank's logits
  if (choices.vocab_parallel_layers) {
    g.append(vocab_parallel_input_embedding(), "in_emb.", {}, {Kind::kFirst, 0});
    g.append(vocab_parallel_output_layer(tpsp, /*training=*/false), "out_emb.", one_token,
             {Kind::kLast, 0});
    if (choices.tie_embeddings && !choices.tied_stages_apart) {
      g.link("in_emb.w", "out_emb.w");
      graph::Tensor& shared = g.mutable_tensor_keep_result(g.at("out_emb.w"));
      shared.role = graph::Role::kActivation;  // the input embedding's weight
      shared.require_grads = false;
    }
    logits = "out_emb.logits";
    vocab = d.vocab_tp;
  } else {
    const Graph emb = reference_embedding(tpsp);
    g.append(emb, "in_emb.", {{"Din", sym("Dvocal")}, {"Dout", sym("Dmodel")}}, {Kind::kFirst, 0});
    std::map<std::string, expr::Expr> out = one_token;
    out.insert({{"Din", sym("Dmodel")}, {"Dout", sym("Dvocal")}});
    g.append(emb, "out_emb.", out, {Kind::kLast, 0});
    logits = "out_emb.y";
    vocab = d.vocab;
  }
  g.link("in_emb.y", first + "input_norm.x");
  std::string x = last + "ffn_res.y";
  if (last_token) {
    const int i = slice(g, "last_token.y", x, 1, c(1), Layout(tpsp).shape);
    g.mutable_tensor_keep_result(i).placement = {Kind::kLast, 0};
    x = "last_token.y";
  }
  g.link(x, "out_emb.x");
  // The token: its logits, one token of each sequence, as the output
  // embedding sees them.
  Graph sample;
  const graph::Shape seen = {d.batch_dp, d.seq_cp, vocab};
  input(sample, "logits", seen);
  custom(sample, "y", "logits", expr::product(seen), seen, {d.batch_dp, d.seq_cp, c(1)});
  g.append(sample, "token.", one_token, {Kind::kLast, 0});
  g.link(logits, "token.logits");
}

void append_vocabulary(Graph& g, const std::string& first, const std::string& last, bool tpsp,
                       const PartChoices& choices) {
  if (choices.vocab_parallel_layers)
    append_vocab_parallel_layers(g, first, last, tpsp, choices);
  else
    append_reference_vocabulary(g, first, last, tpsp);
}

}  // namespace stg::models
