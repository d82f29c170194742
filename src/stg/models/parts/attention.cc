#include "stg/models/parts/attention.h"

#include <string>

#include "stg/models/parts/dims.h"

namespace stg::models {

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
// holds Seq/cp queries against all Seq keys. Q.K^T and dQ, dK run over the
// query/key width, P.V, dP and dV over the value width (they differ in
// multi-head latent attention).
Graph attention_kernel(const KernelDims& k, const PartChoices& choices) {
  using namespace typed;
  const Dims& d = dims();
  const graph::Shape q = {d.batch_dp, d.seq_cp, k.qk_dim, d.heads_tp};
  const graph::Shape out = {d.batch_dp, d.seq_cp, k.v_dim, d.heads_tp};
  const graph::Shape kk = {d.batch_dp, d.seq_cp, k.qk_dim, k.kv_heads_tp};
  const graph::Shape vv = {d.batch_dp, d.seq_cp, k.v_dim, k.kv_heads_tp};
  const graph::Shape k_full = {d.batch_dp, d.seq, k.qk_dim, k.kv_heads_tp};
  const graph::Shape v_full = {d.batch_dp, d.seq, k.v_dim, k.kv_heads_tp};
  const graph::Shape dk_full = {d.batch_dp, d.seq, k.qk_dim, d.heads_tp};
  const graph::Shape dv_full = {d.batch_dp, d.seq, k.v_dim, d.heads_tp};
  const graph::Shape per_cp = {c(1) / d.cp};
  // Operations per (query, head dim) pair: the reference's count.
  const expr::Expr pairs = d.batch_dp * d.seq_cp * k.qk_dim * d.heads_tp;
  const expr::Expr fwd_ops = pairs * c(3), bwd_ops = pairs * c(6);
  // FLOPs of one matrix product over the (query, key, head dim) triples.
  // With the causal saving only the lower triangle of scores is computed.
  const expr::Expr per_triple =
      d.batch_dp * d.seq_cp * d.heads_tp * charged_keys(k, choices.causal_saving) * c(2);
  const expr::Expr qk_matmul = per_triple * k.qk_dim, v_matmul = per_triple * k.v_dim;
  Graph g;
  input(g, "q", q);
  input(g, "k", kk);
  input(g, "v", vv);
  identity(g, "k1", "k", k_full);  // K and V over the whole sequence
  identity(g, "v1", "v", v_full);
  const int qkv = custom(g, "qkv", "q", fwd_ops, q, out);
  flops(g, qk_matmul + v_matmul);
  g.mutable_tensor(qkv).extra_deps = {g.at("k1"), g.at("v1")};
  g.mutable_tensor(qkv).selective_recompute = choices.selective_recompute_core;
  const int b = static_cast<int>(g.size());
  input(g, "dqkv", out, "qkv");
  custom(g, "dq", "dqkv", bwd_ops, out, q);
  flops(g, v_matmul + qk_matmul);
  g.grad_of("q");
  // With grouped-query attention: the reference's kernel gives gradients
  // for all query heads, then sums them down to the KV heads (after the
  // reduce-scatter over cp); with kv_head_gradients the kernel sums them
  // itself, and the reduce-scatter moves the KV heads' gradients.
  const bool summed_after = k.grouped && !choices.kv_head_gradients;
  const std::string dk = summed_after ? "dk1" : "dk", dv = summed_after ? "dv1" : "dv";
  custom(g, dk, "dqkv", bwd_ops, out, summed_after ? dk_full : k_full, per_cp);
  flops(g, qk_matmul);
  if (k.grouped && !summed_after) g.grad_of("k");
  custom(g, dv, "dqkv", bwd_ops, out, summed_after ? dv_full : v_full, per_cp);
  flops(g, v_matmul);
  if (k.grouped && !summed_after) g.grad_of("v");
  if (summed_after) {
    slice(g, "dk", "dk1", 3, k.kv_heads_tp, q);
    g.grad_of("k");
    slice(g, "dv", "dv1", 3, k.kv_heads_tp, out);
    g.grad_of("v");
  }
  g.mark_backward_from(b);
  return g;
}

namespace {

// An RMSNorm over each head (Qwen3's q_norm and k_norm): the reference's
// norms hold no weights, nor does this one.
constexpr int kRmsNormOps = 4;

}  // namespace

AttentionOptions AttentionOptions::of(const std::vector<int64_t>& o) {
  auto at = [&](size_t i) { return i < o.size() && o[i] != 0; };
  return {at(0), at(1), at(2), at(3)};
}

std::vector<int64_t> AttentionOptions::list() const {
  return {grouped, own_head_dim, qkv_bias, qk_norm};
}

Graph attention_projections(const Layout& l, const AttentionOptions& spec) {
  using namespace typed;
  const Dims& d = dims();
  const bool gqa = spec.grouped;
  const expr::Expr& hd = spec.own_head_dim ? d.own_head_dim : d.head_dim;
  const expr::Expr qkv_heads = gqa ? (d.heads + c(2) * d.kv_heads) / d.tp : c(3) * d.heads_tp;
  const expr::Expr& kv_heads = gqa ? d.kv_heads_tp : d.heads_tp;
  const graph::Shape heads = {d.batch_dp, d.seq_cp, hd, d.heads_tp};
  const graph::Shape wqkv = {d.hidden, hd, qkv_heads};
  const graph::Shape bqkv = {hd, qkv_heads};
  const graph::Shape qkv = {d.batch_dp, d.seq_cp, hd, qkv_heads};
  const graph::Shape kv = {d.batch_dp, d.seq_cp, hd, kv_heads};
  const graph::Shape kv2 = {d.batch_dp, d.seq_cp, hd, c(2) * kv_heads};
  const graph::Shape wo = {hd, d.heads_tp, d.hidden};
  Graph g;
  input(g, "x", l.shape);
  weight(g, "wqkv", wqkv);
  if (spec.qkv_bias) weight(g, "bqkv", bqkv);
  einsum(g, "qkv", "x", "wqkv", "bsm,mnh->bsnh", l.full, wqkv);
  // The bias: one addition per element of Q, K and V.
  if (spec.qkv_bias) einsum(g, "qkv_biased", "qkv", "bqkv", "bsnh,nh->bsnh", qkv, bqkv);
  const std::string projected = spec.qkv_bias ? "qkv_biased" : "qkv";
  slice(g, "q", projected, 3, d.heads_tp, qkv);
  slice(g, "k", projected, 3, kv_heads, qkv);
  slice(g, "v", projected, 3, kv_heads, qkv);
  if (spec.qk_norm) {
    elementwise(g, "q_normed", "q", kRmsNormOps, heads);
    elementwise(g, "k_normed", "k", kRmsNormOps, kv);
  }
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
  if (spec.qk_norm) {
    input(g, "dk_normed", kv, "k_normed");
    elementwise(g, "dk", "dk_normed", kRmsNormOps, kv, "k");
    input(g, "dq_normed", heads, "q_normed");
    elementwise(g, "dq", "dq_normed", kRmsNormOps, heads, "q");
  } else {
    input(g, "dk", kv, "k");
    input(g, "dq", heads, "q");
  }
  slice(g, "dkv", "dv", 3, c(2) * kv_heads, kv, "dk", kv);
  slice(g, "dqkv", "dkv", 3, qkv_heads, kv2, "dq", heads);
  g.grad_of(projected);
  if (spec.qkv_bias) {
    // The bias's gradient sums dQKV over the tokens (a partial sum over the
    // data- and context-parallel ranks, like the weights' gradients).
    const int i = custom(g, "dbqkv", "dqkv", expr::product(qkv), qkv, bqkv, {d.batch_dp, d.seq_cp});
    g.grad_of("bqkv");
    g.mutable_tensor_keep_result(i).role = graph::Role::kGradient;
  }
  einsum(g, "dwqkv", "dqkv", "x", "bsnh,bsm->mnh", qkv, l.full, "wqkv");
  einsum(g, "dx1", "dqkv", "wqkv", "bsnh,mnh->bsm", qkv, wqkv);
  identity(g, "dx", "dx1", l.shape);
  g.mark_backward_from(b);
  return g;
}

// With one cp rank there is nothing to cross, and every algorithm is the
// all-gather kernel.
Graph cp_attention_kernel(const KernelDims& k, const PartChoices& choices,
                          const ContextParallel& cp) {
  if (cp.degree > 1) return cp_algo_row(cp.algo).kernel(k, choices, cp.degree);
  return attention_kernel(k, choices);
}

void link_kernel(Graph& g, const std::string& kernel, const std::vector<std::string>& inputs,
                 const std::vector<std::string>& grads, const PartChoices& choices) {
  const char* names[] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) g.link(inputs[i], kernel + names[i]);
  for (int i = 0; i < 3; ++i) g.link(kernel + "d" + names[i], grads[i]);
  g.link(kernel + "qkv", "attn");
  // The kernel's output as the output projection's gradient reads it.
  g.mutable_tensor(g.at("attn")).selective_recompute = choices.selective_recompute_core;
  g.link("dattn", kernel + "dqkv");
}

Graph attention(const Layout& l, const AttentionOptions& spec, const PartChoices& choices,
                const ContextParallel& cp, const KvCache& kv, const AttentionSpan& span) {
  const Dims& d = dims();
  const bool gqa = spec.grouped;
  const expr::Expr& hd = spec.own_head_dim ? d.own_head_dim : d.head_dim;
  const expr::Expr& kv_heads = gqa ? d.kv_heads_tp : d.heads_tp;
  const std::string q = spec.qk_norm ? "q_normed" : "q", k = spec.qk_norm ? "k_normed" : "k";
  Graph g;
  g.append(attention_projections(l, spec), "", {}, {});
  // Serving: each token leaves its K and V, per KV head, in the cache.
  const CacheLayout cache{{c(2) * hd, kv_heads}, hd, hd, span.cached, span.cached};
  const graph::Shape written = {d.batch_dp, d.seq_cp, hd, kv_heads};
  if (kv.phase == ServingPhase::kDecode) {
    add_cache_write(g, kv, cache, k, "v", written, 2);
    const graph::Shape heads = {d.batch_dp, d.seq_cp, hd, d.heads_tp};
    add_decode_attention(g, cache, d.heads_tp, {{q, heads}}, heads);
    g.link("attn_kernel.qkv", "attn");
    return g;
  }
  g.append(cp_attention_kernel({hd, hd, kv_heads, gqa, span.keys, span.causal_keys}, choices, cp),
           "attn_kernel.", {}, {});
  if (spec.qk_norm)
    link_kernel(g, "attn_kernel.", {"q_normed", "k_normed", "v"}, {"dq_normed", "dk_normed", "dv"},
                choices);
  else
    link_kernel(g, "attn_kernel.", {"q", "k", "v"}, {"dq", "dk", "dv"}, choices);
  if (kv.phase != ServingPhase::kPrefill) return g;
  if (!span.cached) {
    add_cache_write(g, kv, cache, k, "v", written, 2);
    return g;
  }
  // The prefill keeps its prompts' last `cached` tokens (of each cp rank's share).
  using namespace typed;
  const graph::Shape kept = {d.batch_dp, *span.cached / d.cp, hd, kv_heads};
  slice(g, "k_kept", k, 1, *span.cached / d.cp, written);
  slice(g, "v_kept", "v", 1, *span.cached / d.cp, written);
  add_cache_write(g, kv, cache, "k_kept", "v_kept", kept, 2);
  return g;
}

}  // namespace stg::models
