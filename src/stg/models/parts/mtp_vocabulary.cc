#include "stg/models/parts/mtp_vocabulary.h"

#include "stg/models/blocks/mtp_module.h"
#include "stg/models/parts/dims.h"
#include "stg/models/parts/embeddings.h"
#include "stg/models/parts/vocab_parallel_embedding.h"

namespace stg::models {
namespace {

using graph::Graph;

// The gradient of weight `w` (the tensor whose grad_of is w).
int gradient_of(const Graph& g, int w) {
  for (size_t i = 0; i < g.size(); ++i)
    if (g[static_cast<int>(i)].grad_of == w) return static_cast<int>(i);
  throw graph::GraphError(g[w].id() + " has no gradient");
}

// Weight `user` becomes a view of weight `owner` (on the same stage): the
// owner's gradient is the sum of its own and the user's, in the owner's
// gradient's layout.
void share_weight(Graph& g, const std::string& owner, const std::string& user) {
  const int o = g.at(owner), u = g.at(user);
  const int owner_grad = gradient_of(g, o), user_grad = gradient_of(g, u);
  g.link(owner, user);
  graph::Tensor& shared = g.mutable_tensor_keep_result(u);
  shared.require_grads = false;
  shared.role = graph::Role::kActivation;
  const graph::OpResult r = g.result(owner_grad);
  const int sum = typed::op(g, g[user_grad].name + "_shared", graph::Op::kAdd, g[owner_grad].id(),
                            g[user_grad].id(), r.y_shape, &r.y_shape, r.y_hidden, r.y_hidden);
  graph::Tensor& t = g.mutable_tensor_keep_result(sum);
  t.placement = g[owner_grad].placement;
  t.phase = graph::Phase::kBackwardInput;
  g.mutable_tensor_keep_result(owner_grad).grad_of = -1;
  g.mutable_tensor_keep_result(user_grad).grad_of = -1;
  g.mutable_tensor_keep_result(sum).grad_of = o;
}

expr::Expr sym(const char* name) { return expr::Expr::symbol(name); }

}  // namespace

void append_mtp_vocabulary(Graph& g, const std::string& p, const std::string& first_prefix,
                           int depth, bool tpsp, const PartChoices& choices, bool ends_apart) {
  using Kind = graph::Placement::Kind;
  const graph::Placement last{Kind::kLast, 0};
  if (choices.vocab_parallel_layers) {
    g.append(vocab_parallel_input_embedding(), p + "emb.", {}, last);
    g.append(vocab_parallel_output_layer(tpsp), p + "head.", {}, last);
  } else {
    const Graph emb = reference_embedding(tpsp);
    g.append(emb, p + "emb.", {{"Din", sym("Dvocal")}, {"Dout", sym("Dmodel")}}, last);
    g.append(emb, p + "head.", {{"Din", sym("Dmodel")}, {"Dout", sym("Dvocal")}}, last);
    g.append(reference_loss(Layout(tpsp)), p + "loss.", {}, last);
    g.link(p + "head.y", p + "loss.y");
    g.link(p + "loss.dy", p + "head.dy");
  }
  g.link(p + "emb.y", p + MtpPorts::embedded);
  g.link(p + MtpPorts::dembedded, p + "emb.dy");
  g.link(p + MtpPorts::head_input, p + "head.x");
  g.link(p + "head.dx", p + MtpPorts::dhead_input);

  // Tied on one stage: the output layer's weight is the input embedding's.
  const bool tied_here = choices.tie_embeddings && !choices.tied_stages_apart;
  share_weight(g, tied_here ? "in_emb.w" : "out_emb.w", p + "head.w");
  if (!ends_apart) {
    share_weight(g, "in_emb.w", p + "emb.w");
  } else if (choices.tie_embeddings) {
    share_weight(g, "out_emb.w", p + "emb.w");  // the last stage's copy
  } else if (depth == 0) {
    g.mutable_tensor(g.at("in_emb.w")).tied = true;
    g.mutable_tensor(g.at(p + "emb.w")).tied = true;
  } else {
    share_weight(g, first_prefix + "emb.w", p + "emb.w");
  }
}

}  // namespace stg::models
