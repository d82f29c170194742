// Ring attention (models/parts/context_parallel.h), as Megatron-LM with
// Transformer Engine runs it: each rank keeps its Seq/cp queries and passes
// its K/V chunk round the cp ring. Forward, cp steps: step j computes the
// partial attention of the queries against the chunk held (the own one at
// step 0), rescaling the running output (no extra work counted), while the
// chunk goes on to the next rank and the previous rank's arrives (cp-1
// hops of K and of V). Backward, the chunks go round again; dQ accumulates
// on the rank, and the dK/dV accumulator of each chunk travels with it,
// created where the chunk is first seen away from home and sent home after
// the last step (cp-1 hops of dK and of dV). Each step is 1/cp of the
// all-gather kernel's work, so the total is the same; with the causal
// saving the load-balanced split (rank i holds chunks i and 2cp-1-i of
// 2cp) leaves exactly half of every step's block unmasked.
//
// A hop is an identity marked Tensor::shift: the pass insert-axis-send-recv
// makes it a SEND to the next rank and a RECV from the previous one.
#include <string>

#include "stg/models/flag_binding.h"
#include "stg/models/mixers/mixer_row.h"
#include "stg/models/parts/context_parallel.h"
#include "stg/models/parts/dims.h"
#include "stg/passes/insert_axis_send_recv.h"
#include "stg/passes/pass.h"

namespace stg::models {

using graph::Graph;

namespace {

// `name` = `from` as the previous rank of the cp ring holds it.
int hop(Graph& g, const std::string& name, const std::string& from, const graph::Shape& shape) {
  const int i = typed::identity(g, name, from, shape);
  graph::Tensor& t = g.mutable_tensor(i);
  t.shift = 1;
  t.shift_symbol = "cp";
  return i;
}

std::string numbered(const std::string& name, int j) { return name + std::to_string(j); }

// One ring-attention kernel's shapes and the work of one of its steps.
struct Ring {
  int cp;
  // Gradients of all query heads, summed down to the KV heads at the end
  // (the reference's), or per KV head from the kernel (kv_head_gradients).
  bool gqa;
  bool core;  // the steps are recomputed with the core attention
  expr::Expr kv_heads_tp;
  graph::Shape heads, o_shape, kk, kv;
  expr::Expr fwd_ops, bwd_ops, qk_matmul, v_matmul;

  // K-shaped and V-shaped tensors; with all query heads (before a grouped
  // gradient is summed down to the KV heads).
  const graph::Shape& shape_of(const std::string& x) const { return x == "k" ? kk : kv; }
  const graph::Shape& all_heads(const std::string& x) const { return x == "k" ? heads : o_shape; }
  const expr::Expr& matmul(const std::string& x) const { return x == "k" ? qk_matmul : v_matmul; }
};

Ring ring_of(const KernelDims& k, const PartChoices& choices, int cp) {
  using namespace typed;
  const Dims& d = dims();
  // One step: the all-gather kernel's counts (attention.cc) over 1/cp of
  // the keys: Q.K^T over the query/key width, P.V over the value width.
  const expr::Expr pairs = d.batch_dp * d.seq_cp * k.qk_dim * d.heads_tp;
  const expr::Expr per_triple =
      d.batch_dp * d.seq_cp * d.heads_tp * d.seq_cp * c(choices.causal_saving ? 1 : 2);
  return {.cp = cp,
          .gqa = k.grouped && !choices.kv_head_gradients,
          .core = choices.selective_recompute_core,
          .kv_heads_tp = k.kv_heads_tp,
          .heads = {d.batch_dp, d.seq_cp, k.qk_dim, d.heads_tp},
          .o_shape = {d.batch_dp, d.seq_cp, k.v_dim, d.heads_tp},
          .kk = {d.batch_dp, d.seq_cp, k.qk_dim, k.kv_heads_tp},
          .kv = {d.batch_dp, d.seq_cp, k.v_dim, k.kv_heads_tp},
          .fwd_ops = pairs * c(3) / d.cp,
          .bwd_ops = pairs * c(6) / d.cp,
          .qk_matmul = per_triple * k.qk_dim,
          .v_matmul = per_triple * k.v_dim};
}

// Forward: the chunk of step j is k<j>, v<j> (k0, v0: the own), passed on
// to the next rank while the step computes.
void ring_forward(Graph& g, const Ring& r) {
  using namespace typed;
  auto chunk = [](const std::string& x, int j) { return j == 0 ? x : numbered(x, j); };
  for (int j = 0; j < r.cp; ++j) {
    if (j + 1 < r.cp)
      for (const char* x : {"k", "v"}) {
        const int h = hop(g, numbered(x, j + 1), chunk(x, j), r.shape_of(x));
        g.mutable_tensor(h).selective_recompute = r.core;
      }
    const std::string out = j + 1 == r.cp ? "qkv" : numbered("o", j);
    const int o = custom(g, out, j == 0 ? "q" : numbered("o", j - 1), r.fwd_ops,
                         j == 0 ? r.heads : r.o_shape, r.o_shape);
    flops(g, r.qk_matmul + r.v_matmul);
    g.mutable_tensor(o).extra_deps = {g.at(chunk("k", j)), g.at(chunk("v", j))};
    g.mutable_tensor(o).selective_recompute = r.core;
  }
}

// Backward step j's gradient of the chunk `x` ("k" or "v") it holds
// (`held`: the chunk's K and V).
void ring_chunk_gradient(Graph& g, const Ring& r, int j, const std::string& x,
                         const std::vector<int>& held) {
  using namespace typed;
  int t;
  if (j == 0) {
    // The own chunk's gradient, kept until the accumulator comes home
    // (for all query heads under grouped-query attention, summed down
    // to the KV heads at the end as the reference's all-gather kernel
    // does, unless the kernel gives KV heads).
    t = custom(g, "d" + x + "_own", "dqkv", r.bwd_ops, r.o_shape,
               r.gqa ? r.all_heads(x) : r.shape_of(x));
  } else {
    // The accumulator of the chunk held: started here at step 1, else
    // received from the previous rank.
    const std::string acc = "d" + numbered(x, j);
    if (j >= 2) hop(g, "r" + acc, "d" + numbered(x, j - 1), r.shape_of(x));
    t = custom(g, acc, j == 1 ? "dqkv" : "r" + acc, r.bwd_ops, j == 1 ? r.o_shape : r.shape_of(x),
               r.shape_of(x));
  }
  flops(g, r.matmul(x));
  std::vector<int> deps = held;
  if (j >= 2) deps.push_back(g.at("dqkv"));
  g.mutable_tensor(t).extra_deps = deps;
}

// Backward: the chunks go round again (b<x><j>); dQ accumulates here, the
// chunks' dK/dV accumulators travel with them and come home at the end.
void ring_backward(Graph& g, const Ring& r) {
  using namespace typed;
  input(g, "dqkv", r.o_shape, "qkv");
  auto bchunk = [](const std::string& x, int j) { return j == 0 ? x : "b" + numbered(x, j); };
  for (int j = 0; j < r.cp; ++j) {
    if (j + 1 < r.cp)
      for (const char* x : {"k", "v"})
        hop(g, "b" + numbered(x, j + 1), bchunk(x, j), r.shape_of(x));
    const std::vector<int> held = {g.at(bchunk("k", j)), g.at(bchunk("v", j))};
    const std::string dq = j + 1 == r.cp ? "dq" : numbered("dq", j);
    custom(g, dq, j == 0 ? "dqkv" : numbered("dq", j - 1), r.bwd_ops, j == 0 ? r.o_shape : r.heads,
           r.heads);
    flops(g, r.qk_matmul + r.v_matmul);
    g.mutable_tensor(static_cast<int>(g.size()) - 1).extra_deps = held;
    if (j + 1 == r.cp) g.grad_of("q");
    for (const std::string x : {"k", "v"}) ring_chunk_gradient(g, r, j, x, held);
  }
  // The accumulators come home and are added to the own chunk's gradient.
  for (const std::string x : {"k", "v"}) {
    const int home = hop(g, "home_d" + x, "d" + numbered(x, r.cp - 1), r.shape_of(x));
    const int t = r.gqa ? slice(g, "d" + x, "d" + x + "_own", 3, r.kv_heads_tp, r.all_heads(x))
                        : identity(g, "d" + x, "d" + x + "_own", r.shape_of(x));
    g.mutable_tensor(t).extra_deps = {home};
    g.grad_of(x);
  }
}

}  // namespace

Graph ring_attention_kernel(const KernelDims& k, const PartChoices& choices, int cp) {
  const Ring r = ring_of(k, choices, cp);
  Graph g;
  typed::input(g, "q", r.heads);
  typed::input(g, "k", r.kk);
  typed::input(g, "v", r.kv);
  ring_forward(g, r);
  const int b = static_cast<int>(g.size());
  ring_backward(g, r);
  g.mark_backward_from(b);
  return g;
}

namespace {

// The chunks go round the cp ring as (axis, offset) peers.
void add_passes(passes::PassManager& pm) { pm.emplace<passes::InsertAxisSendRecv>(); }

// Two chunks of K and V: the one held and the one arriving.
double kv_bytes(double whole, int64_t cp) { return 2.0 * whole / static_cast<double>(cp); }

// TransformerEngine's context parallelism runs a window with the
// all-gather and all-to-all algorithms, not the ring's K/V chunks.
void require_whole_sequence(const MixerRow& row, const std::vector<int64_t>&,
                            const std::map<std::string, int64_t>&, const mesh::Degrees& degree) {
  require(!row.cp.window_flag,
          std::string(row.cp.window_flag ? row.cp.window_flag : "") + " with --cp " +
              num(degree["sp"]) + " needs --cp_algo " +
              cp_algo_names([](const CpAlgoRow& a) { return !a.whole_sequence_chunks; }) +
              ": ring attention's chunks span the whole sequence");
}

const CpAlgoRow kRing = {
    .name = "ring",
    .kernel = ring_attention_kernel,
    .add_passes = add_passes,
    .kv_bytes = kv_bytes,
    .kv_held = "two chunks of K and V, the one held and the one arriving",
    .decoder_only = true,
    .whole_sequence_chunks = true,
    .require = require_whole_sequence,
};

}  // namespace

const CpAlgoRow& ring_cp_row() { return kRing; }

}  // namespace stg::models
