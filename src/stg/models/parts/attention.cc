#include "stg/models/parts/attention.h"

#include <string>

namespace stg::models {
namespace {

using graph::Graph;

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

}  // namespace

Graph attention(const Layout& l, AttentionKind kind, const MegatronParts& megatron) {
  const bool gqa = kind == AttentionKind::kGqa;
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

}  // namespace stg::models
