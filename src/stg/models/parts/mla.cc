#include "stg/models/parts/mla.h"

#include "stg/models/parts/attention.h"
#include "stg/models/parts/dims.h"

namespace stg::models {
namespace {

using graph::Graph;
using graph::Shape;
using namespace typed;

// An RMSNorm of the latents (q_a_layernorm, kv_a_layernorm); like the
// reference's norms, without weights.
constexpr int kRmsNormOps = 4;

struct MlaShapes {
  const Dims& d = dims();
  expr::Expr qk = d.qk_nope_dim + d.qk_rope_dim, kv_a = d.kv_lora_rank + d.qk_rope_dim;
  expr::Expr nope_v = d.qk_nope_dim + d.v_head_dim;
  Shape wq_a = {d.hidden, d.q_lora_rank}, wq_b = {d.q_lora_rank, qk, d.heads_tp};
  Shape wkv_a = {d.hidden, kv_a}, wkv_b = {d.kv_lora_rank, nope_v, d.heads_tp};
  Shape wo = {d.v_head_dim, d.heads_tp, d.hidden};
  Shape q_latent = {d.batch_dp, d.seq_cp, d.q_lora_rank};
  Shape kv_latent_rope = {d.batch_dp, d.seq_cp, kv_a};
  Shape kv_latent = {d.batch_dp, d.seq_cp, d.kv_lora_rank};
  Shape rope = {d.batch_dp, d.seq_cp, d.qk_rope_dim};
  Shape rope1 = {d.batch_dp, d.seq_cp, d.qk_rope_dim, c(1)};
  Shape rope_heads = {d.batch_dp, d.seq_cp, d.qk_rope_dim, d.heads_tp};
  Shape q = {d.batch_dp, d.seq_cp, qk, d.heads_tp};
  Shape kv = {d.batch_dp, d.seq_cp, nope_v, d.heads_tp};
  Shape nope = {d.batch_dp, d.seq_cp, d.qk_nope_dim, d.heads_tp};
  Shape v = {d.batch_dp, d.seq_cp, d.v_head_dim, d.heads_tp};
  Shape one = {c(1)};
};

int concat(Graph& g, const std::string& name, const std::string& x1, const std::string& x2,
           int axis, const Shape& x1_shape, const Shape& x2_shape) {
  const MlaShapes s;
  const int i = op(g, name, graph::Op::kConcat, x1, x2, x1_shape, &x2_shape, s.one, s.one);
  g.mutable_tensor(i).axis = axis;
  return i;
}

// `expand_kv`: the latent is expanded to per-head keys and values (the
// training graph and the prefill); a decode step's absorbed attention reads
// the latent itself and never makes them.
Graph projections(const Layout& l, bool expand_kv) {
  const MlaShapes s;
  Graph g;
  input(g, "x", l.shape);
  weight(g, "wq_a", s.wq_a);
  weight(g, "wq_b", s.wq_b);
  weight(g, "wkv_a", s.wkv_a);
  weight(g, "wkv_b", s.wkv_b);
  // Queries: compressed, normed, expanded per head.
  einsum(g, "q_latent", "x", "wq_a", "bsm,mr->bsr", l.full, s.wq_a);
  elementwise(g, "q_latent_normed", "q_latent", kRmsNormOps, s.q_latent);
  einsum(g, "q", "q_latent_normed", "wq_b", "bsr,rnh->bsnh", s.q_latent, s.wq_b);
  // Keys and values: the latent with the shared rotary key.
  einsum(g, "kv_latent_rope", "x", "wkv_a", "bsm,mr->bsr", l.full, s.wkv_a);
  slice(g, "kv_latent", "kv_latent_rope", 2, s.d.kv_lora_rank, s.kv_latent_rope);
  slice(g, "k_rope_shared", "kv_latent_rope", 2, s.d.qk_rope_dim, s.kv_latent_rope);
  elementwise(g, "kv_latent_normed", "kv_latent", kRmsNormOps, s.kv_latent);
  if (expand_kv) {
    einsum(g, "kv", "kv_latent_normed", "wkv_b", "bsr,rnh->bsnh", s.kv_latent, s.wkv_b);
    slice(g, "k_nope", "kv", 2, s.d.qk_nope_dim, s.kv);
    slice(g, "v", "kv", 2, s.d.v_head_dim, s.kv);
    reshape(g, "k_rope1", "k_rope_shared", s.rope, s.rope1);
    broadcast(g, "k_rope", "k_rope1", 3, s.d.heads_tp, s.rope1);
    concat(g, "k", "k_nope", "k_rope", 2, s.nope, s.rope_heads);
  }
  input(g, "attn", s.v);
  weight(g, "wo", s.wo);
  einsum(g, "o1", "attn", "wo", "bsmh,mhn->bsn", s.v, s.wo);
  identity(g, "o", "o1", l.shape);
  const int b = static_cast<int>(g.size());
  input(g, "do", l.shape, "o");
  identity(g, "do1", "do", l.full, "o1");
  einsum(g, "dattn", "do1", "wo", "bsn,mhn->bsmh", l.full, s.wo);
  einsum(g, "dwo", "do1", "attn", "bsn,bsmh->mhn", l.full, s.v, "wo");
  input(g, "dq", s.q, "q");
  if (expand_kv) {
    input(g, "dk", s.q, "k");
    input(g, "dv", s.v, "v");
    // The keys' gradient: its own part, and the shared rotary key's, summed
    // over the heads (a partial sum over tp).
    slice(g, "dk_nope", "dk", 2, s.d.qk_nope_dim, s.q);
    g.grad_of("k_nope");
    slice(g, "dk_rope", "dk", 2, s.d.qk_rope_dim, s.q);
    g.grad_of("k_rope");
    custom(g, "dk_rope_shared", "dk_rope", expr::product(s.rope_heads), s.rope_heads, s.rope,
           {s.d.heads_tp});
    g.grad_of("k_rope_shared");
    concat(g, "dkv", "dk_nope", "dv", 2, s.nope, s.v);
    g.grad_of("kv");
    einsum(g, "dwkv_b", "dkv", "kv_latent_normed", "bsnh,bsr->rnh", s.kv, s.kv_latent, "wkv_b");
    einsum(g, "dkv_latent_normed", "dkv", "wkv_b", "bsnh,rnh->bsr", s.kv, s.wkv_b,
           "kv_latent_normed");
  } else {
    // A decode step: no backward is ever written (models/forward_graph.h
    // drops it), and no keys or values were made; the gradients of what was
    // are placeholders that keep the block's interface whole.
    input(g, "dwkv_b", s.wkv_b, "wkv_b");
    input(g, "dkv_latent_normed", s.kv_latent, "kv_latent_normed");
    input(g, "dk_rope_shared", s.rope, "k_rope_shared");
  }
  elementwise(g, "dkv_latent", "dkv_latent_normed", kRmsNormOps, s.kv_latent, "kv_latent");
  concat(g, "dkv_latent_rope", "dkv_latent", "dk_rope_shared", 2, s.kv_latent, s.rope);
  g.grad_of("kv_latent_rope");
  einsum(g, "dwkv_a", "dkv_latent_rope", "x", "bsr,bsm->mr", s.kv_latent_rope, l.full, "wkv_a");
  einsum(g, "dx_kv", "dkv_latent_rope", "wkv_a", "bsr,mr->bsm", s.kv_latent_rope, s.wkv_a);
  einsum(g, "dwq_b", "dq", "q_latent_normed", "bsnh,bsr->rnh", s.q, s.q_latent, "wq_b");
  einsum(g, "dq_latent_normed", "dq", "wq_b", "bsnh,rnh->bsr", s.q, s.wq_b, "q_latent_normed");
  elementwise(g, "dq_latent", "dq_latent_normed", kRmsNormOps, s.q_latent, "q_latent");
  einsum(g, "dwq_a", "dq_latent", "x", "bsr,bsm->mr", s.q_latent, l.full, "wq_a");
  einsum(g, "dx_q", "dq_latent", "wq_a", "bsr,mr->bsm", s.q_latent, s.wq_a);
  add_op(g, "dx1", "dx_q", "dx_kv", l.full);
  identity(g, "dx", "dx1", l.shape);
  g.mark_backward_from(b);
  return g;
}

// A decode step's absorbed attention (DeepSeek-V2 §2.1.2): each head's
// q_nope is taken into the latent by W_UK (wkv_b's key part, read as that
// view of the weight), the kernel attends with it and the rotary query over
// the cached latents and rotary keys (Q.K^T over KvLoraRank + QkRopeDim,
// P.V over KvLoraRank), and its latent output is taken to each head's value
// by W_UV (wkv_b's value part). The two products run on the rank's own
// queries, so under context parallelism the absorbed queries are gathered
// and the latent outputs reduce-scattered.
void absorbed_decode_attention(Graph& g, const CacheLayout& cache) {
  const MlaShapes s;
  const Dims& d = s.d;
  const Shape q_nope = {d.batch_dp, d.seq_cp, d.qk_nope_dim, d.heads_tp};
  const Shape q_rope = {d.batch_dp, d.seq_cp, d.qk_rope_dim, d.heads_tp};
  const Shape w_uk = {d.kv_lora_rank, d.qk_nope_dim, d.heads_tp};
  const Shape w_uv = {d.kv_lora_rank, d.v_head_dim, d.heads_tp};
  const Shape latent = {d.batch_dp, d.seq_cp, d.kv_lora_rank, d.heads_tp};
  einsum(g, "q_absorbed", "q", "wkv_b", "bsnh,rnh->bsrh", q_nope, w_uk);
  add_decode_attention(g, cache, d.heads_tp, {{"q_absorbed", latent}, {"q", q_rope}}, latent);
  einsum(g, "attn_absorbed", "attn_kernel.qkv", "wkv_b", "bsrh,rvh->bsvh", latent, w_uv);
  g.link("attn_absorbed", "attn");
}

}  // namespace

Graph latent_attention(const Layout& l, const PartChoices& choices, const ContextParallel& cp,
                       const KvCache& kv) {
  const Dims& d = dims();
  const MlaShapes s;
  Graph g;
  g.append(projections(l, kv.phase != ServingPhase::kDecode), "", {}, {});
  // Serving: each token caches its normed latent and its rotary key.
  const CacheLayout cache{{s.kv_a}, s.kv_a, d.kv_lora_rank};
  if (kv.phase == ServingPhase::kDecode) {
    add_cache_write(g, kv, cache, "kv_latent_normed", "k_rope_shared", s.kv_latent, 2, &s.rope);
    absorbed_decode_attention(g, cache);
    return g;
  }
  g.append(cp_attention_kernel({d.qk_nope_dim + d.qk_rope_dim, d.v_head_dim, d.heads_tp, false},
                               choices, cp),
           "attn_kernel.", {}, {});
  link_kernel(g, "attn_kernel.", {"q", "k", "v"}, {"dq", "dk", "dv"}, choices);
  if (kv.phase == ServingPhase::kPrefill)
    add_cache_write(g, kv, cache, "kv_latent_normed", "k_rope_shared", s.kv_latent, 2, &s.rope);
  return g;
}

}  // namespace stg::models
