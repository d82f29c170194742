// DeepSpeed-Ulysses attention (models/parts/context_parallel.h): Q, K and V
// are moved from the sequence split to a head split by all-to-alls over cp
// (each rank then holds the whole sequence for Head/(tp·cp) heads), the
// kernel runs on that, and its output goes back by a fourth all-to-all. The
// backward does the same with dO in and dQ, dK, dV out. The all-to-alls are
// not written here: the kernel reads its inputs in the head-split view and
// insert-collectives finds the transition (docs/facts.md §3).
#include <string>

#include "stg/models/flag_binding.h"
#include "stg/models/mixers/mixer_row.h"
#include "stg/models/parts/context_parallel.h"
#include "stg/models/parts/dims.h"

namespace stg::models {

using graph::Graph;

Graph ulysses_attention_kernel(const KernelDims& k, const PartChoices& choices) {
  using namespace typed;
  const Dims& d = dims();
  // Gradients of all query heads, then summed down to the KV heads (the
  // reference's), or per KV head from the kernel (kv_head_gradients).
  const bool gqa = k.grouped && !choices.kv_head_gradients;
  // Sequence split, as the projections see it.
  const graph::Shape q = {d.batch_dp, d.seq_cp, k.qk_dim, d.heads_tp};
  const graph::Shape o = {d.batch_dp, d.seq_cp, k.v_dim, d.heads_tp};
  const graph::Shape kk = {d.batch_dp, d.seq_cp, k.qk_dim, k.kv_heads_tp};
  const graph::Shape vv = {d.batch_dp, d.seq_cp, k.v_dim, k.kv_heads_tp};
  // Head split: the whole sequence, 1/cp of the rank's heads.
  const expr::Expr heads_cp = d.heads_tp / d.cp, kv_heads_cp = k.kv_heads_tp / d.cp;
  const graph::Shape q_h = {d.batch_dp, d.seq, k.qk_dim, heads_cp};
  const graph::Shape o_h = {d.batch_dp, d.seq, k.v_dim, heads_cp};
  const graph::Shape k_h = {d.batch_dp, d.seq, k.qk_dim, kv_heads_cp};
  const graph::Shape v_h = {d.batch_dp, d.seq, k.v_dim, kv_heads_cp};
  // The same (query, head dim) pairs per rank as the all-gather kernel's,
  // and the same counts (attention.cc): Q.K^T over the query/key width, P.V
  // over the value width.
  const expr::Expr pairs = d.batch_dp * d.seq * k.qk_dim * heads_cp;
  const expr::Expr fwd_ops = pairs * c(3), bwd_ops = pairs * c(6);
  const expr::Expr per_triple =
      d.batch_dp * d.seq * heads_cp * charged_keys(k, choices.causal_saving) * c(2);
  const expr::Expr qk_matmul = per_triple * k.qk_dim, v_matmul = per_triple * k.v_dim;
  Graph g;
  input(g, "q", q);
  input(g, "k", kk);
  input(g, "v", vv);
  identity(g, "q_h", "q", q_h);  // all-to-all: sequence split -> head split
  identity(g, "k_h", "k", k_h);
  identity(g, "v_h", "v", v_h);
  const int core = custom(g, "core", "q_h", fwd_ops, q_h, o_h);
  flops(g, qk_matmul + v_matmul);
  g.mutable_tensor(core).extra_deps = {g.at("k_h"), g.at("v_h")};
  g.mutable_tensor(core).selective_recompute = choices.selective_recompute_core;
  const int out = identity(g, "qkv", "core", o);  // all-to-all back
  g.mutable_tensor(out).selective_recompute = choices.selective_recompute_core;
  const int b = static_cast<int>(g.size());
  input(g, "dqkv", o, "qkv");
  identity(g, "do_h", "dqkv", o_h);
  custom(g, "dq_h", "do_h", bwd_ops, o_h, q_h);
  flops(g, v_matmul + qk_matmul);
  identity(g, "dq", "dq_h", q);
  g.grad_of("q");
  for (const std::string x : {"k", "v"}) {
    const bool is_k = x == "k";
    const graph::Shape& all = is_k ? q_h : o_h;
    const std::string full = gqa ? "d" + x + "1_h" : "d" + x + "_h";
    custom(g, full, "do_h", bwd_ops, o_h, gqa ? all : (is_k ? k_h : v_h));
    flops(g, is_k ? qk_matmul : v_matmul);
    if (gqa) slice(g, "d" + x + "_h", full, 3, kv_heads_cp, all);
    identity(g, "d" + x, "d" + x + "_h", is_k ? kk : vv);
    g.grad_of(x);
  }
  g.mark_backward_from(b);
  return g;
}

namespace {

Graph kernel(const KernelDims& k, const PartChoices& choices, int) {
  return ulysses_attention_kernel(k, choices);
}

// K and V of the whole sequence for 1/cp of the rank's KV heads.
double kv_bytes(double whole, int64_t cp) { return whole / static_cast<double>(cp); }

// Ulysses gives every cp rank whole heads of the tp rank's share.
void require_whole_heads(const MixerRow& row, const std::vector<int64_t>& options,
                         const std::map<std::string, int64_t>& values,
                         const mesh::Degrees& degree) {
  if (!row.cp.heads) return;
  const CpHeads h = row.cp.heads(options, values);
  const int64_t tp = degree["tp"], cp = degree["sp"];
  const int64_t kv_tp = h.heads / tp;
  require(kv_tp % cp == 0 && (h.query_heads / tp) % cp == 0,
          "--cp_algo ulysses splits the heads over cp: --cp " + num(cp) + " does not divide the " +
              num(kv_tp) + h.what + " per tensor-parallel rank (" + h.flag + " " + num(h.heads) +
              " / --tp " + num(tp) + "): choose a cp degree that divides it, or --cp_algo ring");
}

const CpAlgoRow kUlysses = {
    .name = "ulysses",
    .kernel = kernel,
    .add_passes = nullptr,
    .kv_bytes = kv_bytes,
    .kv_held = "K and V of the whole sequence for 1/cp of the rank's KV heads",
    .decoder_only = true,
    .whole_sequence_chunks = false,
    .require = require_whole_heads,
};

}  // namespace

const CpAlgoRow& ulysses_cp_row() { return kUlysses; }

}  // namespace stg::models
