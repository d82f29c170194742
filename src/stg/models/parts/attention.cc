#include "stg/models/parts/attention.h"

#include <string>

#include "stg/models/parts/dims.h"

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
  using namespace typed;
  const Dims& d = dims();
  const graph::Shape heads = {d.batch_dp, d.seq_cp, d.head_dim, d.heads_tp};
  const expr::Expr& kv_heads = gqa ? d.kv_heads_tp : d.heads_tp;
  const graph::Shape kv = {d.batch_dp, d.seq_cp, d.head_dim, kv_heads};
  const graph::Shape kv_full = {d.batch_dp, d.seq, d.head_dim, kv_heads};
  const graph::Shape grad_full = {d.batch_dp, d.seq, d.head_dim, d.heads_tp};
  const graph::Shape per_cp = {c(1) / d.cp};
  // Operations per (query, head dim) pair: the reference's count.
  const expr::Expr pairs = d.batch_dp * d.seq_cp * d.head_dim * d.heads_tp;
  const expr::Expr fwd_ops = pairs * c(3), bwd_ops = pairs * c(6);
  // FLOPs of one matrix product over the (query, key, head dim) triples.
  // With the causal saving only the lower triangle of scores is computed.
  const expr::Expr one_matmul = pairs * d.seq * c(megatron.causal_saving ? 1 : 2);
  const expr::Expr two_matmuls = one_matmul * c(2);
  Graph g;
  input(g, "q", heads);
  input(g, "k", kv);
  input(g, "v", kv);
  identity(g, "k1", "k", kv_full);  // K and V over the whole sequence
  identity(g, "v1", "v", kv_full);
  const int qkv = custom(g, "qkv", "q", fwd_ops, heads, heads);
  flops(g, two_matmuls);
  g.mutable_tensor(qkv).extra_deps = {g.at("k1"), g.at("v1")};
  g.mutable_tensor(qkv).selective_recompute = megatron.selective_recompute_core;
  const int b = static_cast<int>(g.size());
  input(g, "dqkv", heads, "qkv");
  custom(g, "dq", "dqkv", bwd_ops, heads, heads);
  flops(g, two_matmuls);
  g.grad_of("q");
  // With grouped-query attention: gradients for all query heads, then
  // summed down to the KV heads.
  const std::string k = gqa ? "dk1" : "dk", v = gqa ? "dv1" : "dv";
  custom(g, k, "dqkv", bwd_ops, heads, grad_full, per_cp);
  flops(g, one_matmul);
  custom(g, v, "dqkv", bwd_ops, heads, grad_full, per_cp);
  flops(g, one_matmul);
  if (gqa) {
    slice(g, "dk", "dk1", 3, d.kv_heads_tp, heads);
    g.grad_of("k");
    slice(g, "dv", "dv1", 3, d.kv_heads_tp, heads);
    g.grad_of("v");
  }
  g.mark_backward_from(b);
  return g;
}

// Projections around the kernel: fused QKV, output projection.
Graph attention_projections(const Layout& l, bool gqa) {
  using namespace typed;
  const Dims& d = dims();
  const expr::Expr qkv_heads = gqa ? (d.heads + c(2) * d.kv_heads) / d.tp : c(3) * d.heads_tp;
  const expr::Expr& kv_heads = gqa ? d.kv_heads_tp : d.heads_tp;
  const graph::Shape heads = {d.batch_dp, d.seq_cp, d.head_dim, d.heads_tp};
  const graph::Shape wqkv = {d.hidden, d.head_dim, qkv_heads};
  const graph::Shape qkv = {d.batch_dp, d.seq_cp, d.head_dim, qkv_heads};
  const graph::Shape kv = {d.batch_dp, d.seq_cp, d.head_dim, kv_heads};
  const graph::Shape kv2 = {d.batch_dp, d.seq_cp, d.head_dim, c(2) * kv_heads};
  const graph::Shape wo = {d.head_dim, d.heads_tp, d.hidden};
  Graph g;
  input(g, "x", l.shape);
  weight(g, "wqkv", wqkv);
  einsum(g, "qkv", "x", "wqkv", "bsm,mnh->bsnh", l.full, wqkv);
  slice(g, "q", "qkv", 3, d.heads_tp, qkv);
  slice(g, "k", "qkv", 3, kv_heads, qkv);
  slice(g, "v", "qkv", 3, kv_heads, qkv);
  input(g, "attn", heads);
  weight(g, "wo", wo);
  einsum(g, "o1", "attn", "wo", "bsmh,mhn->bsn", heads, wo);
  identity(g, "o", "o1", l.shape);
  const int b = static_cast<int>(g.size());
  input(g, "do", l.shape, "o");
  identity(g, "do1", "do", l.full, "o1");
  einsum(g, "dattn", "do1", "wo", "bsn,mhn->bsmh", l.full, wo);
  einsum(g, "dwo", "do1", "attn", "bsn,bsmh->mhn", l.full, heads, "wo");
  input(g, "dv", kv, "v");
  input(g, "dk", kv, "k");
  input(g, "dq", heads, "q");
  slice(g, "dkv", "dv", 3, c(2) * kv_heads, kv, "dk", kv);
  slice(g, "dqkv", "dkv", 3, qkv_heads, kv2, "dq", heads);
  g.grad_of("qkv");
  einsum(g, "dwqkv", "dqkv", "x", "bsnh,bsm->mnh", qkv, l.full, "wqkv");
  einsum(g, "dx1", "dqkv", "wqkv", "bsnh,mnh->bsm", qkv, wqkv);
  identity(g, "dx", "dx1", l.shape);
  g.mark_backward_from(b);
  return g;
}

// The kernel for the run's --cp_algo; with one cp rank there is nothing to
// cross, and every algorithm is the all-gather kernel.
Graph kernel(bool gqa, const MegatronParts& megatron, const ContextParallel& cp) {
  if (cp.degree > 1 && cp.algo == CpAlgo::kRing)
    return ring_attention_kernel(gqa, megatron, cp.degree);
  if (cp.degree > 1 && cp.algo == CpAlgo::kUlysses) return ulysses_attention_kernel(gqa, megatron);
  return attention_kernel(gqa, megatron);
}

}  // namespace

Graph attention(const Layout& l, AttentionKind kind, const MegatronParts& megatron,
                const ContextParallel& cp) {
  const bool gqa = kind == AttentionKind::kGqa;
  Graph g;
  g.append(attention_projections(l, gqa), "", {}, {});
  g.append(kernel(gqa, megatron, cp), "attn_kernel.", {}, {});
  for (const char* t : {"q", "k", "v"}) g.link(t, std::string("attn_kernel.") + t);
  for (const char* t : {"dq", "dk", "dv"}) g.link(std::string("attn_kernel.") + t, t);
  g.link("attn_kernel.qkv", "attn");
  // The kernel's output as the output projection's gradient reads it.
  g.mutable_tensor(g.at("attn")).selective_recompute = megatron.selective_recompute_core;
  g.link("dattn", "attn_kernel.dqkv");
  return g;
}

}  // namespace stg::models
