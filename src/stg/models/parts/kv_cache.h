// The KV cache of a block's attention in a serving workload
// (models/inference_decoder.h, docs/inference.md): a persistent tensor
// "kv_cache" of CacheTokens tokens per sequence, what each token leaves of
// its keys and values. The prefill writes its tokens' into it ("kv_write");
// a decode step appends its token's ("kv_append") and attends over the
// cache, Ctx tokens of it (the context so far with its own): that kernel
// reads the cache, its FLOPs and the bytes it reads grow with the context
// (lower/step_growth.h).
#pragma once

#include <string>

#include "stg/graph/graph.h"

namespace stg::models {

// Which phase of a serving iteration the block is built for (none: training).
enum class ServingPhase { kNone, kPrefill, kDecode };

struct KvCache {
  ServingPhase phase = ServingPhase::kNone;
  int element_bytes = 0;  // of the cache (--kv_dtype); 0: the trace's --dtype
};

// What one token leaves in the cache of a sequence on a rank (`token`: its
// dims after [batch, tokens]) and how a decode step's attention reads it:
// per query head, Q.K^T over `score_width` and P.V over `value_width` of
// each cached token; `extra_macs` per query token besides (multi-head
// latent attention's absorbed projections).
struct CacheLayout {
  graph::Shape token;
  expr::Expr score_width, value_width;
  expr::Expr extra_macs = expr::Expr::constant(0);
};

// Adds the cache and the op that writes the token's keys and values into
// it: the concatenation of x1 and x2 along `axis` of their view `shape`, or
// a copy of x1 when x2 is empty.
void add_cache_write(graph::Graph& g, const KvCache& kv, const CacheLayout& layout,
                     const std::string& x1, const std::string& x2, const graph::Shape& shape,
                     int axis);

// The decode step's attention "attn_kernel.qkv": `heads` query heads of the
// step's tokens over the cache, waiting for the queries `q` and the append;
// its output, of `out` shape, is linked to "attn".
void add_decode_attention(graph::Graph& g, const CacheLayout& layout, const expr::Expr& heads,
                          const std::string& q, const graph::Shape& out);

}  // namespace stg::models
