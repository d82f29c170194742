// Multi-head latent attention (DeepSeek-V2/V3; DeepSeek-V3 technical report
// §2.1.1): the input is compressed to a query latent of QLoraRank and a
// key-value latent of KvLoraRank (each RMS-normed), plus one rotary key of
// QkRopeDim shared by all heads; the latents are expanded per head to
// queries of QkNopeDim + QkRopeDim, keys of QkNopeDim (joined by the shared
// rotary key) and values of VHeadDim. Weights, as published:
//   wq_a [Dmodel, QLoraRank], wq_b [QLoraRank, QkNope+QkRope, Head],
//   wkv_a [Dmodel, KvLoraRank + QkRope], wkv_b [KvLoraRank, QkNope+VHead, Head],
//   wo [VHead, Head, Dmodel].
// Tensor parallelism splits the heads (wq_b, wkv_b, wo); the down
// projections are whole on every tp rank, and the latents' gradients are
// summed over tp before they reach them.
#pragma once

#include "stg/graph/graph.h"
#include "stg/models/parts/context_parallel.h"
#include "stg/models/parts/kv_cache.h"
#include "stg/models/parts/layout.h"
#include "stg/models/parts/part_choices.h"

namespace stg::models {

// Tensors: input x and output o in the activation layout, their gradients
// do and dx; the weights above; the kernel under attn_kernel, crossing the
// context-parallel axis as `cp` says. Serving (`kv`): the KV cache holds
// each token's key-value latent with its rotary key (KvLoraRank +
// QkRopeDim, whole on every tp rank), and a decode step attends over it
// with the up-projections absorbed into the query and the output
// (DeepSeek-V2 §2.1.2): Q.K^T over the latent and the rotary key, P.V over
// the latent, per head.
graph::Graph latent_attention(const Layout& l, const PartChoices& choices,
                              const ContextParallel& cp = {}, const KvCache& kv = {});

}  // namespace stg::models
