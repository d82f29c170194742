// DeepSpeed-Ulysses attention (models/parts/context_parallel.h): Q, K and V
// are moved from the sequence split to a head split by all-to-alls over cp
// (each rank then holds the whole sequence for Head/(tp·cp) heads), the
// kernel runs on that, and its output goes back by a fourth all-to-all. The
// backward does the same with dO in and dQ, dK, dV out. The all-to-alls are
// not written here: the kernel reads its inputs in the head-split view and
// insert-collectives finds the transition (docs/facts.md §3).
#include <string>

#include "stg/models/parts/context_parallel.h"
#include "stg/models/parts/dims.h"

namespace stg::models {

using graph::Graph;

Graph ulysses_attention_kernel(bool gqa, const MegatronParts& megatron) {
  using namespace typed;
  const Dims& d = dims();
  const expr::Expr& kv_heads_tp = gqa ? d.kv_heads_tp : d.heads_tp;
  // Sequence split, as the projections see it.
  const graph::Shape heads = {d.batch_dp, d.seq_cp, d.head_dim, d.heads_tp};
  const graph::Shape kv = {d.batch_dp, d.seq_cp, d.head_dim, kv_heads_tp};
  // Head split: the whole sequence, 1/cp of the rank's heads.
  const expr::Expr heads_cp = d.heads_tp / d.cp, kv_heads_cp = kv_heads_tp / d.cp;
  const graph::Shape q_h = {d.batch_dp, d.seq, d.head_dim, heads_cp};
  const graph::Shape kv_h = {d.batch_dp, d.seq, d.head_dim, kv_heads_cp};
  // The same (query, head dim) pairs per rank as the all-gather kernel's,
  // and the same counts (attention.cc).
  const expr::Expr pairs = d.batch_dp * d.seq * d.head_dim * heads_cp;
  const expr::Expr fwd_ops = pairs * c(3), bwd_ops = pairs * c(6);
  const expr::Expr one_matmul = pairs * d.seq * c(megatron.causal_saving ? 1 : 2);
  const expr::Expr two_matmuls = one_matmul * c(2);
  Graph g;
  input(g, "q", heads);
  input(g, "k", kv);
  input(g, "v", kv);
  identity(g, "q_h", "q", q_h);  // all-to-all: sequence split -> head split
  identity(g, "k_h", "k", kv_h);
  identity(g, "v_h", "v", kv_h);
  const int core = custom(g, "core", "q_h", fwd_ops, q_h, q_h);
  flops(g, two_matmuls);
  g.mutable_tensor(core).extra_deps = {g.at("k_h"), g.at("v_h")};
  g.mutable_tensor(core).selective_recompute = megatron.selective_recompute_core;
  const int out = identity(g, "qkv", "core", heads);  // all-to-all back
  g.mutable_tensor(out).selective_recompute = megatron.selective_recompute_core;
  const int b = static_cast<int>(g.size());
  input(g, "dqkv", heads, "qkv");
  identity(g, "do_h", "dqkv", q_h);
  custom(g, "dq_h", "do_h", bwd_ops, q_h, q_h);
  flops(g, two_matmuls);
  identity(g, "dq", "dq_h", heads);
  g.grad_of("q");
  // With grouped-query attention: gradients for all query heads, then
  // summed down to the KV heads (as the all-gather kernel does).
  for (const std::string x : {"k", "v"}) {
    const std::string all = gqa ? "d" + x + "1_h" : "d" + x + "_h";
    custom(g, all, "do_h", bwd_ops, q_h, q_h);
    flops(g, one_matmul);
    if (gqa) slice(g, "d" + x + "_h", all, 3, kv_heads_cp, q_h);
    identity(g, "d" + x, "d" + x + "_h", kv);
    g.grad_of(x);
  }
  g.mark_backward_from(b);
  return g;
}

}  // namespace stg::models
