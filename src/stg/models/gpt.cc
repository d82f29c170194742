#include "stg/models/gpt.h"

#include <string>

#include "stg/models/flat_weights.h"
#include "stg/models/megatron_embedding.h"
#include "stg/models/model_axes.h"

namespace stg::models {
namespace {

using graph::Graph;
using graph::Op;

// Activation layout between modules.
struct Layout {
  const char* act;  // [B, S, Dmodel] as stored between modules
  explicit Layout(bool tpsp)
      : act(tpsp ? "Batch/dp, Seq/(cp*tp), Dmodel" : "Batch/dp, Seq/cp, Dmodel") {}
};

constexpr const char* kFull = "Batch/dp, Seq/cp, Dmodel";
constexpr const char* kHeads = "Batch/dp, Seq/cp, Dmodel/Head, Head/tp";

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

Graph layer_norm(const Layout& l) {
  Graph g;
  g.input("x", l.act);
  g.elementwise("y", "x", 5, l.act);
  g.input("dy", l.act, "y");
  g.elementwise("dx", "dy", 5, l.act, "x");
  g.mark_backward_from(2);
  return g;
}

Graph residual(const Layout& l) {
  Graph g;
  g.input("x1", l.act);
  g.input("x2", l.act);
  g.add_op("y", "x1", "x2", l.act);
  g.input("dy", l.act, "y");
  g.identity("dx1", "dy", l.act, "x1");
  g.identity("dx2", "dy", l.act, "x2");
  g.mark_backward_from(3);
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

// Fused attention kernel: one op forward, one per gradient backward. With
// grouped-query attention K and V have KVHead heads; the kernel's cost is
// still that of Head heads.
//
// Its operation counts are the reference's (linear in Seq). Under physical
// units it is charged the FLOPs of its matrix products instead (the
// Megatron-LM count, no causal-mask saving): forward Q.K^T and P.V, 2 x 2
// FLOPs per (query, key, head dim) triple; backward twice that: dP = dO.V^T
// and dQ = dS.K for dq, dV = P^T.dO for dv, dK = dS^T.Q for dk. Each rank
// holds Seq/cp queries against all Seq keys.
Graph attention_kernel(bool gqa, const MegatronParts& megatron) {
  const std::string kv = gqa ? "Batch/dp, Seq/cp, Dmodel/Head, KVHead/tp" : kHeads;
  const std::string kv_full =
      gqa ? "Batch/dp, Seq, Dmodel/Head, KVHead/tp" : "Batch/dp, Seq, Dmodel/Head, Head/tp";
  constexpr const char* grad_full = "Batch/dp, Seq, Dmodel/Head, Head/tp";
  constexpr const char* fwd_ops = "Batch/dp*Seq/cp*Dmodel/Head*Head/tp*3";
  constexpr const char* bwd_ops = "Batch/dp*Seq/cp*Dmodel/Head*Head/tp*6";
  // FLOPs of one matrix product over the (query, key, head dim) triples.
  // With the causal saving only the lower triangle of scores is computed.
  const bool half = megatron.causal_saving;
  const char* one_matmul = half ? "Batch/dp*Seq/cp*Seq*Dmodel/Head*Head/tp"
                                : "Batch/dp*Seq/cp*Seq*Dmodel/Head*Head/tp*2";
  const char* two_matmuls = half ? "Batch/dp*Seq/cp*Seq*Dmodel/Head*Head/tp*2"
                                 : "Batch/dp*Seq/cp*Seq*Dmodel/Head*Head/tp*4";
  Graph g;
  g.input("q", kHeads);
  g.input("k", kv);
  g.input("v", kv);
  g.identity("k1", "k", kv_full);  // K and V over the whole sequence
  g.identity("v1", "v", kv_full);
  const int qkv = g.custom("qkv", "q", fwd_ops, kHeads, kHeads);
  g.flops(two_matmuls);
  g.mutable_tensor(qkv).extra_deps = {g.at("k1"), g.at("v1")};
  g.mutable_tensor(qkv).selective_recompute = megatron.enabled;
  const int b = static_cast<int>(g.size());
  g.input("dqkv", kHeads, "qkv");
  g.custom("dq", "dqkv", bwd_ops, kHeads, kHeads);
  g.flops(two_matmuls).grad_of("q");
  if (gqa) {
    // Gradients for all query heads, then summed down to the KV heads.
    g.custom("dk1", "dqkv", bwd_ops, kHeads, grad_full, "1/cp");
    g.flops(one_matmul);
    g.custom("dv1", "dqkv", bwd_ops, kHeads, grad_full, "1/cp");
    g.flops(one_matmul);
    g.slice("dk", "dk1", 3, "KVHead/tp", kHeads);
    g.grad_of("k");
    g.slice("dv", "dv1", 3, "KVHead/tp", kHeads);
    g.grad_of("v");
  } else {
    g.custom("dk", "dqkv", bwd_ops, kHeads, grad_full, "1/cp");
    g.flops(one_matmul);
    g.custom("dv", "dqkv", bwd_ops, kHeads, grad_full, "1/cp");
    g.flops(one_matmul);
  }
  g.mark_backward_from(b);
  return g;
}

// Projections around the kernel: fused QKV, output projection.
Graph attention_projections(const Layout& l, bool gqa) {
  const std::string heads = gqa ? "(Head+2*KVHead)/tp" : "3*Head/tp";
  const std::string kv_heads = gqa ? "KVHead/tp" : "Head/tp";
  const std::string wqkv = "Dmodel, Dmodel/Head, " + heads;
  const std::string qkv = "Batch/dp, Seq/cp, Dmodel/Head, " + heads;
  const std::string kv = "Batch/dp, Seq/cp, Dmodel/Head, " + kv_heads;
  const std::string kv2 = "Batch/dp, Seq/cp, Dmodel/Head, 2*" + kv_heads;
  constexpr const char* wo = "Dmodel/Head, Head/tp, Dmodel";
  Graph g;
  g.input("x", l.act);
  g.weight("wqkv", wqkv);
  g.einsum("qkv", "x", "wqkv", "bsm,mnh->bsnh", kFull, wqkv);
  g.slice("q", "qkv", 3, "Head/tp", qkv);
  g.slice("k", "qkv", 3, kv_heads, qkv);
  g.slice("v", "qkv", 3, kv_heads, qkv);
  g.input("attn", kHeads);
  g.weight("wo", wo);
  g.einsum("o1", "attn", "wo", "bsmh,mhn->bsn", kHeads, wo);
  g.identity("o", "o1", l.act);
  const int b = static_cast<int>(g.size());
  g.input("do", l.act, "o");
  g.identity("do1", "do", kFull, "o1");
  g.einsum("dattn", "do1", "wo", "bsn,mhn->bsmh", kFull, wo);
  g.einsum("dwo", "do1", "attn", "bsn,bsmh->mhn", kFull, kHeads, "wo");
  g.input("dv", kv, "v");
  g.input("dk", kv, "k");
  g.input("dq", kHeads, "q");
  g.slice("dkv", "dv", 3, "2*" + kv_heads, kv, "dk", kv);
  g.slice("dqkv", "dkv", 3, heads, kv2, "dq", kHeads);
  g.grad_of("qkv");
  g.einsum("dwqkv", "dqkv", "x", "bsnh,bsm->mnh", qkv, kFull, "wqkv");
  g.einsum("dx1", "dqkv", "wqkv", "bsnh,mnh->bsm", qkv, wqkv);
  g.identity("dx", "dx1", l.act);
  g.mark_backward_from(b);
  return g;
}

Graph attention(const Layout& l, bool gqa, const MegatronParts& megatron) {
  Graph g;
  g.append(attention_projections(l, gqa), "", {}, {});
  g.append(attention_kernel(gqa, megatron), "attn_kernel.", {}, {});
  for (const char* t : {"q", "k", "v"}) g.link(t, std::string("attn_kernel.") + t);
  for (const char* t : {"dq", "dk", "dv"}) g.link(std::string("attn_kernel.") + t, t);
  g.link("attn_kernel.qkv", "attn");
  // The kernel's output as the output projection's gradient reads it.
  g.mutable_tensor(g.at("attn")).selective_recompute = megatron.enabled;
  g.link("dattn", "attn_kernel.dqkv");
  return g;
}

// Gated FFN (LLaMA): down(up(x) * gate(x)).
Graph gated_feed_forward(const Layout& l, bool tpsp) {
  constexpr const char* hidden = "Batch/dp, Seq/cp, Dff/tp";
  Graph g;
  g.input("x0", l.act);
  g.weight("wup", "Dmodel, Dff/tp");
  g.weight("wgate", "Dmodel, Dff/tp");
  g.weight("wdown", "Dff/tp, Dmodel");
  g.identity("x00", "x0", kFull);
  g.einsum("xup", "x00", "wup", "bsm,mn->bsn", kFull, "Dmodel, Dff/tp");
  g.einsum("xgate", "x00", "wgate", "bsm,mn->bsn", kFull, "Dmodel, Dff/tp");
  g.einsum("xupgate", "xup", "xgate", "bsm,bsm->bsm", hidden, hidden);
  g.einsum("xdown1", "xupgate", "wdown", "bsm,mn->bsn", hidden, "Dff/tp, Dmodel");
  // The reference reads this result as [.., Dff]; kept for equal figures.
  g.identity("xdown", "xdown1", tpsp ? "Batch/dp, Seq/(cp*tp), Dff" : "Batch/dp, Seq/cp, Dff");
  const int b = static_cast<int>(g.size());
  g.input("dxdown", l.act, "xdown");
  g.identity("dxdown2", "dxdown", kFull);
  g.einsum("dwdown", "dxdown2", "xupgate", "bsn,bsm->mn", kFull, hidden, "wdown");
  g.einsum("dxupgate", "dxdown2", "wdown", "bsn,mn->bsm", kFull, "Dff/tp, Dmodel", "xupgate");
  g.einsum("dxup", "dxupgate", "xgate", "bsm,bsm->bsm", hidden, hidden, "xup");
  g.einsum("dxgate", "dxupgate", "xup", "bsm,bsm->bsm", hidden, hidden, "xgate");
  g.identity("x01", "x0", kFull);
  g.einsum("dwup", "dxup", "x01", "bsn,bsm->mn", hidden, kFull, "wup");
  g.einsum("dwgate", "dxgate", "x01", "bsn,bsm->mn", hidden, kFull, "wgate");
  g.einsum("dx00", "dxup", "wup", "bsn,mn->bsm", hidden, "Dmodel, Dff/tp");
  g.einsum("dx01", "dxgate", "wgate", "bsn,mn->bsm", hidden, "Dmodel, Dff/tp");
  g.op("dx000", Op::kAdd, "dx00", "dx01", kFull, kFull, "1/tp", "1/tp");
  g.grad_of("x0");
  g.identity("dx0", "dx000", l.act);
  g.mark_backward_from(b);
  return g;
}

Graph feed_forward(const Layout& l, bool tpsp) {
  constexpr const char* hidden = "Batch/dp, Seq/cp, Dff/tp";
  Graph g;
  g.input("x0", l.act);
  g.weight("wgate", "Dmodel, Dff/tp");
  g.weight("wdown", "Dff/tp, Dmodel");
  g.identity("x00", "x0", kFull);
  g.einsum("xgate", "x00", "wgate", "bsm,mn->bsn", kFull, "Dmodel, Dff/tp");
  g.einsum("xdown1", "xgate", "wdown", "bsm,mn->bsn", hidden, "Dff/tp, Dmodel");
  // The reference reads this result as [.., Dff]; kept for equal figures.
  g.identity("xdown", "xdown1", tpsp ? "Batch/dp, Seq/(cp*tp), Dff" : "Batch/dp, Seq/cp, Dff");
  const int b = static_cast<int>(g.size());
  g.input("dxdown", l.act, "xdown");
  g.identity("dxdown2", "dxdown", kFull);
  g.einsum("dwdown", "dxdown2", "xgate", "bsn,bsm->mn", kFull, hidden, "wdown");
  g.einsum("dxgate", "dxdown2", "wdown", "bsn,mn->bsm", kFull, "Dff/tp, Dmodel", "xgate");
  g.identity("x01", "x0", kFull);
  g.einsum("dwgate", "dxgate", "x01", "bsn,bsm->mn", hidden, kFull, "wgate");
  g.einsum("dx000", "dxgate", "wgate", "bsn,mn->bsm", hidden, "Dmodel, Dff/tp");
  g.identity("dx0", "dx000", l.act);
  g.mark_backward_from(b);
  return g;
}

Graph decoder_block(bool tpsp, bool llama, const MegatronParts& megatron) {
  const Layout l(tpsp);
  return gpt_decoder_block(tpsp, attention(l, llama, megatron),
                           llama ? gated_feed_forward(l, tpsp) : feed_forward(l, tpsp),
                           {"ffn.", "ffn.x0", "ffn.xdown", "ffn.dxdown", "ffn.dx0"}, megatron);
}

expr::Expr sym(const char* name) { return expr::Expr::symbol(name); }

// Megatron-LM's vocabulary layers around the blocks. Tied on one stage: the
// output layer reads the input embedding's weight and the weight's gradient
// is the sum of both uses. Tied on stages apart: each end holds a copy,
// marked tied (the tie-embeddings pass sums their gradients once per step).
void append_megatron_vocabulary(Graph& g, const std::string& last, bool tpsp,
                                const MegatronParts& megatron) {
  using Kind = graph::Placement::Kind;
  g.append(megatron_input_embedding(), "in_emb.", {}, {Kind::kFirst, 0});
  g.append(megatron_output_layer(tpsp), "out_emb.", {}, {Kind::kLast, 0});
  g.link("in_emb.y", "transformer.0.input_norm.x");
  g.link("transformer.0.input_norm.dx", "in_emb.dy");
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
  const graph::Placement first = g[g.at("in_emb.dw")].placement;
  const int sum = g.op("in_emb.dw_tied", graph::Op::kAdd, "in_emb.dw", "out_emb.dw",
                       "Dvocal/tp, Dmodel", "Dvocal/tp, Dmodel", "1/(cp*dp)", "1/(cp*dp)");
  graph::Tensor& t = g.mutable_tensor_keep_result(sum);
  t.placement = first;
  t.phase = graph::Phase::kBackwardInput;
  g.mutable_tensor_keep_result(g.at("in_emb.dw")).grad_of = -1;
  g.mutable_tensor_keep_result(g.at("out_emb.dw")).grad_of = -1;
  g.mutable_tensor_keep_result(sum).grad_of = g.at("in_emb.w");
}

}  // namespace

Graph gpt_attention(bool tpsp, bool grouped_query, const MegatronParts& megatron) {
  return attention(Layout(tpsp), grouped_query, megatron);
}
Graph gpt_feed_forward(bool tpsp, bool gated) {
  return gated ? gated_feed_forward(Layout(tpsp), tpsp) : feed_forward(Layout(tpsp), tpsp);
}

Graph gpt_decoder_block(bool tpsp, const Graph& attention_module, const Graph& ffn,
                        const FfnPorts& ports, const MegatronParts& megatron) {
  const Layout l(tpsp);
  Graph g;
  g.append(layer_norm(l), "input_norm.", {}, {});
  g.append(attention_module, "mha.", {}, {});
  g.append(residual(l), "mha_res.", {}, {});
  g.append(layer_norm(l), "post_attn_norm.", {}, {});
  g.append(ffn, ports.prefix, {}, {});
  g.append(residual(l), "ffn_res.", {}, {});
  g.link("input_norm.y", "mha.x");
  g.link("mha.o", "mha_res.x1");
  g.link("input_norm.x", "mha_res.x2");
  g.link("mha_res.dx1", "mha.do");
  g.link("mha_res.y", "post_attn_norm.x");
  g.link("post_attn_norm.dx", "mha_res.dy");
  g.link("post_attn_norm.y", ports.x);
  g.link(ports.y, "ffn_res.x1");
  g.link("post_attn_norm.x", "ffn_res.x2");
  g.link("ffn_res.dx1", ports.dy);
  // The norms' input gradients sum the branch and the residual gradient.
  auto sum_into = [&](const std::string& target, const std::string& a, const std::string& b) {
    graph::Tensor& t = g.mutable_tensor(g.at(target));
    t.op = graph::Op::kAdd;
    t.x1 = g.at(a);
    t.x2 = g.at(b);
    t.x2_shape = t.x1_shape;
    t.x2_hidden = t.x1_hidden;
  };
  sum_into("input_norm.dy", "mha.dx", "mha_res.dx2");
  sum_into("post_attn_norm.dy", ports.dx, "ffn_res.dx2");
  flatten_block_weights(g, megatron.reduce_per_step, megatron.expert_data_symbol);
  return g;
}

Model assemble_decoder_model(const Graph& block, int num_stacks, bool tpsp,
                             const MegatronParts& megatron) {
  using Kind = graph::Placement::Kind;
  Model m;
  Graph& g = m.graph;
  for (int i = 0; i < num_stacks; ++i) {
    const std::string p = "transformer." + std::to_string(i) + ".";
    g.append(block, p, {}, {Kind::kBlock, i});
    if (i > 0) {
      const std::string prev = "transformer." + std::to_string(i - 1) + ".";
      g.link(prev + "ffn_res.y", p + "input_norm.x");
      g.link(p + "input_norm.dx", prev + "ffn_res.dy");
    }
  }
  const std::string last = "transformer." + std::to_string(num_stacks - 1) + ".";
  if (megatron.enabled) {
    append_megatron_vocabulary(g, last, tpsp, megatron);
  } else {
    const Graph emb = embedding(tpsp);
    g.append(emb, "in_emb.", {{"Din", sym("Dvocal")}, {"Dout", sym("Dmodel")}}, {Kind::kFirst, 0});
    g.append(emb, "out_emb.", {{"Din", sym("Dmodel")}, {"Dout", sym("Dvocal")}}, {Kind::kLast, 0});
    g.link("in_emb.y", "transformer.0.input_norm.x");
    g.link("transformer.0.input_norm.dx", "in_emb.dy");
    g.link(last + "ffn_res.y", "out_emb.x");
    g.link("out_emb.dx", last + "ffn_res.dy");
    g.append(loss(Layout(tpsp)), "loss.", {}, {Kind::kLast, 0});
    g.link("out_emb.y", "loss.y");
    g.link("loss.dy", "out_emb.dy");
  }
  m.axes = common_axes(Spelling::kLater);  // moe adds ep
  m.degree_symbols = all_degree_symbols();
  m.claim = graph::ClaimRule::kEveryAxisInDim;  // the later reference's rule
  m.num_blocks = num_stacks;
  return m;
}

Model build_gpt(const GptConfig& config) {
  return assemble_decoder_model(decoder_block(config.tpsp, config.llama, config.megatron),
                                config.num_stacks, config.tpsp, config.megatron);
}

}  // namespace stg::models
