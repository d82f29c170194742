#include "stg/models/parts/kv_cache.h"

#include "stg/models/parts/dims.h"

namespace stg::models {

using graph::Graph;
using graph::Shape;

namespace {

// [batch, tokens] + the token's dims.
Shape cache_shape(const expr::Expr& tokens, const CacheLayout& layout) {
  Shape s = {dims().batch_dp, tokens};
  s.insert(s.end(), layout.token.begin(), layout.token.end());
  return s;
}

const char* write_name(const KvCache& kv) {
  return kv.phase == ServingPhase::kPrefill ? "kv_write" : "kv_append";
}

}  // namespace

void add_cache_write(Graph& g, const KvCache& kv, const CacheLayout& layout, const std::string& x1,
                     const std::string& x2, const Shape& shape, int axis) {
  using namespace typed;
  const int cache = input(g, "kv_cache", cache_shape(dims().cache_tokens, layout));
  graph::Tensor& c = g.mutable_tensor_keep_result(cache);
  c.role = graph::Role::kPersistent;
  c.element_bytes = kv.element_bytes;
  const Shape one = {expr::Expr::constant(1)};
  // A copy of every element written (a concatenation of K and V).
  const int write =
      x2.empty() ? elementwise(g, write_name(kv), x1, 1, shape)
                 : op(g, write_name(kv), graph::Op::kConcat, x1, x2, shape, &shape, one, one);
  graph::Tensor& w = g.mutable_tensor(write);
  w.axis = axis;
  w.element_bytes = kv.element_bytes;
}

void add_decode_attention(Graph& g, const CacheLayout& layout, const expr::Expr& heads,
                          const std::string& q, const Shape& out) {
  using namespace typed;
  const Dims& d = dims();
  // Every query token of every sequence against Ctx cached tokens.
  const expr::Expr queries = d.batch_dp * d.seq_cp;
  const expr::Expr macs = queries * heads * d.context * (layout.score_width + layout.value_width) +
                          queries * layout.extra_macs;
  const int qkv =
      custom(g, "attn_kernel.qkv", "kv_cache", macs, cache_shape(d.context, layout), out);
  flops(g, macs * c(2));
  g.mutable_tensor(qkv).extra_deps = {g.at(q), g.at("kv_append")};
  g.link("attn_kernel.qkv", "attn");
}

}  // namespace stg::models
