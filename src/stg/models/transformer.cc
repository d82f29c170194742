#include "stg/models/transformer.h"

#include <string>

#include "stg/models/model_axes.h"

namespace stg::models {
namespace {

using graph::Graph;

// x:[B,S,Din] -> y:[B,S,Dout]; the backward pass computes dw and dx.
Graph embedding(bool fsdp) {
  Graph g;
  g.input("x", "Batch/dp, Seq/sp, Din/tp");
  g.weight("w", fsdp ? "Din/(dp*sp), Dout/tp" : "Din, Dout/tp");
  g.einsum("y", "x", "w", "bsm,mn->bsn", "Batch/dp, Seq/sp, Din", "Din, Dout/tp");
  const int backward = static_cast<int>(g.size());
  g.input("dy", "Batch/dp, Seq/sp, Dout/tp", "y");
  g.einsum("dw", "dy", "x", "bsn,bsm->mn", "Batch/dp, Seq/sp, Dout/tp", "Batch/dp, Seq/sp, Din",
           "w");
  g.einsum("dx", "dy", "w", "bsn,mn->bsm", "Batch/dp, Seq/sp, Dout/tp", "Din, Dout/tp", "x");
  g.mark_backward_from(backward);
  return g;
}

Graph attention(bool fsdp) {
  constexpr const char* act = "Batch/dp, Seq/sp, Dmodel/tp";
  constexpr const char* heads = "Batch/dp, Seq/sp, Dmodel/Head, Head/tp";
  constexpr const char* heads_full_seq = "Batch/dp, Seq, Dmodel/Head, Head/tp";
  constexpr const char* scores = "Batch/dp, Seq, Seq/sp, Head/tp";
  constexpr const char* x_full = "Batch/dp, Seq/sp, Dmodel";
  constexpr const char* w_view = "Dmodel, Dmodel/Head, Head/tp";
  const char* w_store = fsdp ? "Dmodel/dp, Dmodel/(Head*sp), Head/tp" : w_view;
  Graph g;
  g.input("x", act);
  for (const char* w : {"wq", "wk", "wv"}) g.weight(w, w_store);
  g.einsum("q", "x", "wq", "bsm,mnh->bsnh", x_full, w_view);
  g.einsum("k", "x", "wk", "bsm,mnh->bsnh", x_full, w_view);
  g.einsum("v", "x", "wv", "bsm,mnh->bsnh", x_full, w_view);
  g.einsum("qk", "q", "k", "bsnh,bwnh->bswh", heads_full_seq, heads);
  g.einsum("qkv", "qk", "v", "bswh,bwnh->bsnh", scores, heads);
  g.reshape("qkv_reshape", "qkv", heads, act);
  g.add_op("res", "qkv_reshape", "x", act);
  g.elementwise("norm", "res", 5, act);
  const int backward = static_cast<int>(g.size());
  g.input("d_norm", act, "norm");
  g.elementwise("d_res", "d_norm", 5, act, "res");
  g.identity("d_qkv_reshape", "d_res", act, "qkv_reshape");
  g.reshape("d_qkv", "d_qkv_reshape", act, heads, "qkv");
  g.einsum("d_qk", "d_qkv", "v", "bsnh,bwnh->bswh", heads_full_seq, heads, "qk");
  g.einsum("d_v", "d_qkv", "qk", "bsnh,bswh->bwnh", heads_full_seq, scores, "v");
  g.einsum("d_q", "d_qk", "k", "bswh,bwnh->bsnh", scores, heads, "q");
  g.einsum("d_k", "d_qk", "q", "bswh,bsnh->bwnh", scores, heads_full_seq, "k");
  g.einsum("d_wq", "d_q", "x", "bsnh,bsm->mnh", heads, x_full, "wq");
  g.einsum("d_wk", "d_k", "x", "bsnh,bsm->mnh", heads, x_full, "wk");
  g.einsum("d_wv", "d_v", "x", "bsnh,bsm->mnh", heads, x_full, "wv");
  g.einsum("d_x1", "d_q", "wq", "bsnh,mnh->bsm", heads, w_view);
  g.einsum("d_x2", "d_k", "wk", "bsnh,mnh->bsm", heads, w_view);
  g.einsum("d_x3", "d_v", "wv", "bsnh,mnh->bsm", heads, w_view);
  g.identity("d_x4", "d_res", act);
  g.add_op("d_x12", "d_x1", "d_x2", act);
  g.add_op("d_x34", "d_x3", "d_x4", act);
  g.add_op("d_x", "d_x12", "d_x34", act, "x");
  g.mark_backward_from(backward);
  return g;
}

Graph feed_forward(bool fsdp) {
  constexpr const char* act = "Batch/dp, Seq/sp, Dmodel/tp";
  constexpr const char* x_full = "Batch/dp, Seq/sp, Dmodel";
  constexpr const char* hidden = "Batch/dp, Seq/sp, Dff/tp";
  Graph g;
  g.input("x0", act);
  g.weight("w1", fsdp ? "Dmodel/(dp*sp), Dff/tp" : "Dmodel, Dff/tp");
  g.einsum("x1", "x0", "w1", "bsm,mn->bsn", x_full, "Dmodel, Dff/tp");
  g.weight("w2", fsdp ? "Dff/tp, Dmodel/(dp*sp)" : "Dff/tp, Dmodel");
  g.einsum("x2", "x1", "w2", "bsm,mn->bsn", hidden, "Dff/tp, Dmodel");
  g.add_op("res", "x2", "x0", act);
  g.elementwise("norm", "res", 5, act);
  const int backward = static_cast<int>(g.size());
  g.input("dnorm", act, "norm");
  g.elementwise("dres", "dnorm", 5, act, "res");
  g.identity("dx2", "dres", act, "x2");
  g.einsum("dw2", "dx2", "x1", "bsn,bsm->mn", x_full, hidden, "w2");
  g.einsum("dx1", "dx2", "w2", "bsn,mn->bsm", x_full, "Dff/tp, Dmodel", "x1");
  g.einsum("dw1", "dx1", "x0", "bsn,bsm->mn", hidden, x_full, "w1");
  g.identity("dx00", "dres", act);
  g.einsum("dx01", "dx1", "w1", "bsn,mn->bsm", hidden, "Dmodel, Dff/tp");
  g.add_op("dx0", "dx00", "dx01", act, "x0");
  g.mark_backward_from(backward);
  return g;
}

expr::Expr sym(const char* name) { return expr::Expr::symbol(name); }

}  // namespace

Model build_transformer(const TransformerConfig& config) {
  const bool fsdp = config.weight_sharded;
  const Graph emb = embedding(fsdp);
  Graph block;
  block.append(attention(fsdp), "mha.", {}, {});
  block.append(feed_forward(fsdp), "ffn.", {}, {});
  block.link("mha.norm", "ffn.x0");
  block.link("ffn.dx0", "mha.d_norm");

  using Kind = graph::Placement::Kind;
  Model m;
  Graph& g = m.graph;
  g.append(emb, "in_emb.", {{"Dout", sym("Dmodel")}}, {Kind::kFirst, 0});
  g.append(emb, "out_emb.", {{"Din", sym("Dmodel")}}, {Kind::kLast, 0});
  for (int i = 0; i < config.num_stacks; ++i) {
    const std::string p = "transformer." + std::to_string(i) + ".";
    g.append(block, p, {}, {Kind::kBlock, i});
    if (i == 0) {
      g.link("in_emb.y", p + "mha.x");
      g.link(p + "mha.d_x", "in_emb.dy");
    } else {
      const std::string prev = "transformer." + std::to_string(i - 1) + ".";
      g.link(prev + "ffn.norm", p + "mha.x");
      g.link(p + "mha.d_x", prev + "ffn.dnorm");
    }
  }
  const std::string last = "transformer." + std::to_string(config.num_stacks - 1) + ".";
  g.link(last + "ffn.norm", "out_emb.x");
  g.link("out_emb.dx", last + "ffn.dnorm");
  g.link("out_emb.y", "out_emb.dy", /*force=*/true);  // the loss: dy stands for y

  m.axes = common_axes(Spelling::kSeed);
  m.degree_symbols = symbols_of(m.axes);
  m.claim = graph::ClaimRule::kOneAxisPerDim;  // the seed era's rule
  m.num_blocks = config.num_stacks;
  return m;
}

}  // namespace stg::models
