// The KV cache of a block's attention in a serving workload
// (models/inference_decoder.h, docs/inference.md): a persistent tensor
// "kv_cache" of CacheTokens tokens per sequence (CacheTokens/cp on each
// context-parallel rank), what each token leaves of its keys and values. The prefill writes its
// tokens' into it ("kv_write"); a decode step appends its token's ("kv_append") and attends over
// the cache, Ctx tokens of it (the context so far with its own): that kernel reads the cache, its
// FLOPs and the bytes it reads grow with the context (lower/step_growth.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stg/graph/graph.h"

namespace stg::models {

// The ports serving links a block's mixer by (models/inference_decoder.cc,
// within the block's mixer slot: blocks/frame.h): the tensor with which a
// prefill writes a sequence's serving state, and the one with which a decode
// step reads it (the attention over a KV cache, or a recurrent state's
// update). A mixer with serving state names its two tensors so.
inline constexpr const char* kStateWritePort = "kv_write";
inline constexpr const char* kStateReadPort = "attn_kernel.qkv";

// Which phase of a serving iteration the block is built for (none: training).
enum class ServingPhase { kNone, kPrefill, kDecode };

struct KvCache {
  ServingPhase phase = ServingPhase::kNone;
  int element_bytes = 0;  // of the cache (--kv_dtype); 0: the trace's --dtype
};

// What one token leaves in the cache of a sequence on a rank (`token`: its
// dims after [batch, tokens]) and how a decode step's attention reads it:
// per query head, Q.K^T over `score_width` and P.V over `value_width` of
// each cached token.
struct CacheLayout {
  graph::Shape token;
  expr::Expr score_width, value_width;
  // The tokens of a sequence the cache holds and a decode step attends over
  // (unset: CacheTokens and the context Ctx); a windowed attention's are
  // bounded by its window.
  std::optional<expr::Expr> cached = {}, attended = {};
};

// Adds the cache and the op that writes the token's keys and values into
// it: the concatenation of x1 and x2 along `axis` of their views `shape`
// and `x2_shape` (null: `shape`), or a copy of x1 when x2 is empty.
void add_cache_write(graph::Graph& g, const KvCache& kv, const CacheLayout& layout,
                     const std::string& x1, const std::string& x2, const graph::Shape& shape,
                     int axis, const graph::Shape* x2_shape = nullptr);

// A query of the decode step's attention and its view [batch, tokens, ...].
struct DecodeQuery {
  std::string name;
  graph::Shape shape;
};

// The decode step's attention "attn_kernel.qkv": `heads` query heads of the
// step's tokens over the cache, waiting for the queries and the append; its
// output is of `out` shape, over the step's tokens of every cp rank
// (returned: the caller links or reads it). Under context parallelism each
// rank holds 1/cp of the cache: the queries are all-gathered over cp
// ("attn_kernel.q_all", then q_all1, ...) and the outputs are partial sums,
// reduce-scattered where a reader takes its own tokens.
int add_decode_attention(graph::Graph& g, const CacheLayout& layout, const expr::Expr& heads,
                         const std::vector<DecodeQuery>& queries, const graph::Shape& out);

}  // namespace stg::models
