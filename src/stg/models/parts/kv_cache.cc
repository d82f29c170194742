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
  return kv.phase == ServingPhase::kPrefill ? kStateWritePort : "kv_append";
}

}  // namespace

void add_cache_write(Graph& g, const KvCache& kv, const CacheLayout& layout, const std::string& x1,
                     const std::string& x2, const Shape& shape, int axis, const Shape* x2_shape) {
  using namespace typed;
  // Each context-parallel rank holds 1/cp of every sequence's tokens.
  const expr::Expr& cached = layout.cached ? *layout.cached : dims().cache_tokens;
  const int cache = input(g, "kv_cache", cache_shape(cached / dims().cp, layout));
  graph::Tensor& c = g.mutable_tensor_keep_result(cache);
  c.role = graph::Role::kPersistent;
  c.element_bytes = kv.element_bytes;
  const Shape one = {expr::Expr::constant(1)};
  // A copy of every element written (a concatenation of K and V).
  const int write = x2.empty() ? elementwise(g, write_name(kv), x1, 1, shape)
                               : op(g, write_name(kv), graph::Op::kConcat, x1, x2, shape,
                                    x2_shape ? x2_shape : &shape, one, one);
  graph::Tensor& w = g.mutable_tensor(write);
  w.axis = axis;
  w.element_bytes = kv.element_bytes;
}

int add_decode_attention(Graph& g, const CacheLayout& layout, const expr::Expr& heads,
                         const std::vector<DecodeQuery>& queries, const Shape& out) {
  using namespace typed;
  const Dims& d = dims();
  // The step's queries of every cp rank (all-gathered over cp) against the
  // Ctx/cp cached tokens of this rank; the outputs are partial sums over cp.
  auto gathered = [&](Shape s) {
    s[1] = d.seq;
    return s;
  };
  std::vector<int> deps;
  for (size_t i = 0; i < queries.size(); ++i)
    deps.push_back(identity(g, "attn_kernel.q_all" + (i == 0 ? "" : std::to_string(i)),
                            queries[i].name, gathered(queries[i].shape)));
  const expr::Expr& context = layout.attended ? *layout.attended : d.context;
  const expr::Expr macs =
      d.batch_dp * d.seq * heads * (context / d.cp) * (layout.score_width + layout.value_width);
  const int qkv = custom(g, kStateReadPort, "kv_cache", macs, cache_shape(context / d.cp, layout),
                         gathered(out), {c(1) / d.cp});
  flops(g, macs * c(2));
  deps.push_back(g.at("kv_append"));
  g.mutable_tensor(qkv).extra_deps = deps;
  return qkv;
}

}  // namespace stg::models
