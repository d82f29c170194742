// The attention parts of a block: a fused QKV projection, the attention
// kernel (one op forward, one per gradient backward) and the output
// projection. Multi-head attention, or grouped-query attention with KVHead
// key/value heads; heads of Dmodel/Head, or of HeadDim; Qwen2's biases on Q, K and V and Qwen3's
// RMSNorm over each head of Q and K. Multi-head latent attention has its
// own projections (models/parts/mla.h) around the same kernel.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stg/graph/graph.h"
#include "stg/models/parts/context_parallel.h"
#include "stg/models/parts/kernel_dims.h"
#include "stg/models/parts/kv_cache.h"
#include "stg/models/parts/layout.h"
#include "stg/models/parts/part_choices.h"

namespace stg::models {

// Multi-head or grouped-query attention's options (its row's, a block's
// mixer_options: models/mixers/mha_attention.cc): KVHead key/value heads
// shared by groups of query heads, heads of HeadDim (else Dmodel/Head),
// biases on the Q, K and V projections (Qwen2), an RMSNorm over each head
// of Q and K (Qwen3).
struct AttentionOptions {
  bool grouped = false, own_head_dim = false, qkv_bias = false, qk_norm = false;
  // From a block's options (empty: all false), and back.
  static AttentionOptions of(const std::vector<int64_t>& options);
  std::vector<int64_t> list() const;
};

// Tensors: q, k, v (in), qkv (out), their gradients dqkv (in), dq, dk, dv.
// K and V all-gathered over the context-parallel axis (the reference's).
graph::Graph attention_kernel(const KernelDims& k, const PartChoices& choices);

// The kernel that crosses the context-parallel axis as `cp` says (the
// all-gather kernel above when cp is 1); the same tensors.
graph::Graph cp_attention_kernel(const KernelDims& k, const PartChoices& choices,
                                 const ContextParallel& cp);

// The projections around the kernel: fused QKV (with its bias), output
// projection; Q and K normed per head (`qk_norm`: q_normed, k_normed feed
// the kernel, whose gradients arrive as dq_normed, dk_normed). Tensors: x,
// o, do, dx; q, k, v for the kernel, its output attn, the gradients dq, dk,
// dv it returns and dattn it reads.
graph::Graph attention_projections(const Layout& l, const AttentionOptions& a);

// What bounds the tokens a query sees (unset: every token before it): the
// keys it is charged for without and with the causal saving
// (KernelDims::keys), and the tokens of a sequence its KV cache keeps and a
// decode step reads (the prefill writes its prompts' last ones). A mixer
// row of a windowed attention sets them.
struct AttentionSpan {
  std::optional<expr::Expr> keys = {}, causal_keys = {}, cached = {};
};

// Tensors: input x and output o in the activation layout, their gradients
// do and dx; weights wqkv (and bqkv) and wo. The kernel crosses the
// context-parallel axis as `cp` says (context_parallel.h). Serving (`kv`):
// the prefill writes K and V into the block's KV cache, a decode step
// appends its own and attends over the cache (kv_cache.h).
// Multi-head or grouped-query attention over `span`.
graph::Graph attention(const Layout& l, const AttentionOptions& a, const PartChoices& choices = {},
                       const ContextParallel& cp = {}, const KvCache& kv = {},
                       const AttentionSpan& span = {});

// Links the kernel (appended under `kernel`) to projections that feed it
// q, k, v (`inputs`) and read its output as "attn" and its gradients into
// `grads` (dq, dk, dv), and the output's gradient "dattn".
void link_kernel(graph::Graph& g, const std::string& kernel, const std::vector<std::string>& inputs,
                 const std::vector<std::string>& grads, const PartChoices& choices);

}  // namespace stg::models
