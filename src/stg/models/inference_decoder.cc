#include "stg/models/inference_decoder.h"

#include <map>
#include <string>
#include <vector>

#include "stg/models/forward_graph.h"
#include "stg/models/parts/dims.h"
#include "stg/models/parts/embeddings.h"

namespace stg::models {

using graph::Graph;
using graph::Tensor;

namespace {

// The decoder's forward pass built for one serving phase.
Graph phase_graph(const DecoderConfig& c, ServingPhase phase, int kv_element_bytes) {
  Graph g;
  append_decoder_blocks(g, c, {phase, kv_element_bytes});
  const int n = static_cast<int>(c.spec.blocks.size());
  append_serving_vocabulary(g, decoder_block_prefix(0), decoder_block_prefix(n - 1), c.tpsp,
                            c.megatron, /*last_token=*/phase == ServingPhase::kPrefill);
  return forward_part(g);
}

// A weight or a KV cache: one tensor for every phase.
bool shared(const Tensor& t) {
  return t.op == graph::Op::kPlaceholder &&
         (t.role == graph::Role::kWeight || t.role == graph::Role::kPersistent);
}

// Where a phase goes: its name prefix, phase and step (the step number at
// `step_at` of its names, or -1), its serving pool and the prefix of the
// weights and caches it shares with the other phases of the pool.
struct PhasePlace {
  std::string prefix;
  graph::Phase phase = graph::Phase::kPrefill;
  int step = 0, step_at = -1;
  int pool = 0;
  std::string shared_prefix;
};

// Appends `module` (a phase's graph) as `place` says, symbols renamed; its
// weights and caches are the ones already in `g` of the same name (added
// the first time). Returns where each tensor of `module` is in `g`.
std::vector<int> append_phase(Graph& g, const Graph& module, const PhasePlace& place,
                              const std::map<std::string, expr::Expr>& renames) {
  const int n = static_cast<int>(module.size());
  std::vector<int> index(n, -1);
  std::vector<bool> added(n, false);
  int next = static_cast<int>(g.size());
  auto name_of = [&](const Tensor& t) {
    return (shared(t) ? place.shared_prefix : place.prefix) + t.name;
  };
  for (int i = 0; i < n; ++i) {
    const int found = shared(module[i]) ? g.find(name_of(module[i])) : -1;
    added[i] = found < 0;
    index[i] = added[i] ? next++ : found;
  }
  for (int i = 0; i < n; ++i) {
    if (!added[i]) continue;
    Tensor t = module[i];
    auto map = [&](int& ref) {
      if (ref >= 0) ref = index[ref];
    };
    map(t.x1);
    map(t.x2);
    map(t.succeeds);
    for (int& d : t.extra_deps) map(d);
    t.name = name_of(t);
    t.placement.pool = place.pool;
    if (!shared(t)) {
      t.step_at = place.step_at;
      t.phase = place.phase;
      t.phase_step = place.step;
    }
    graph::rename_symbols(t, renames);
    g.add(std::move(t));
  }
  return index;
}

// The prompts' last tokens (one per request: a copy), where decode steps
// sample theirs: what the first decode step embeds without a prefill. As
// the steps' tokens are (one token per sequence: Seq is 1 when appended).
Graph prompt_tokens() {
  using namespace typed;
  const Dims& d = dims();
  const graph::Shape tokens = {d.batch_dp, d.seq_cp, c(1)};
  Graph g;
  input(g, "tokens", tokens);
  elementwise(g, "token.y", "tokens", 1, tokens);
  for (int i = 0; i < static_cast<int>(g.size()); ++i)
    g.mutable_tensor_keep_result(i).placement = {graph::Placement::Kind::kLast, 0};
  return g;
}

}  // namespace

Model build_inference_decoder(const DecoderConfig& config, const ServingPlan& plan) {
  const DecoderConfig& c = config;
  using graph::Phase;
  using Renames = std::map<std::string, expr::Expr>;
  Model m;
  Graph& g = m.graph;
  const Renames one_token = {{"Seq", expr::Expr::constant(1)}};
  // The prefill, or the prompts' last tokens without one. A prefill pool
  // of its own holds caches of the prompt only.
  const Graph prefill = plan.prefill ? phase_graph(c, ServingPhase::kPrefill, plan.kv_element_bytes)
                                     : prompt_tokens();
  Renames prefill_renames = plan.prefill ? Renames{} : one_token;
  if (plan.disaggregated) prefill_renames["CacheTokens"] = dims().seq;
  const std::vector<int> prefilled = append_phase(
      g, prefill, {plan.prefill ? "prefill." : "prompt.", Phase::kPrefill}, prefill_renames);
  int token = prefilled[prefill.at("token.y")];
  g.mutable_tensor_keep_result(token).feeds_next_step = true;
  if (plan.decode_steps == 0) {
    set_decoder_axes(m, c);
    return m;
  }
  // Disaggregated: the decode pool has weights and caches of its own, and
  // receives its first token with the caches from the prefill pool.
  const int pool = plan.disaggregated ? 1 : 0;
  const std::string shared_prefix = plan.disaggregated ? "decode_pool." : "";
  if (plan.disaggregated) {
    const Graph first = prompt_tokens();
    const std::vector<int> at = append_phase(
        g, first, {"decode_pool.first.", Phase::kPrefill, 0, -1, pool, shared_prefix}, one_token);
    const int received = at[first.at("token.y")];
    g.mutable_tensor(received).extra_deps.push_back(token);
    g.mutable_tensor_keep_result(received).feeds_next_step = true;
    token = received;
  }
  // Disaggregated: each block's cache, as the prefill pool's rank of the
  // block wrote it, received once by the decode pool's rank of the block
  // (before any decode step: the receives of a micro-batch's decode steps
  // come after it).
  std::vector<int> cache_in(c.spec.blocks.size(), -1);
  for (size_t b = 0; plan.disaggregated && b < c.spec.blocks.size(); ++b) {
    const std::string name = decoder_block_prefix(static_cast<int>(b)) + "mha.kv_write";
    const int written = prefilled[prefill.at(name)];
    const graph::OpResult& r = g.result(written);
    Tensor in;
    in.name = "decode_pool.received." + name;
    in.op = graph::Op::kIdentity;
    in.x1 = written;
    in.x1_shape = r.y_shape;
    in.x1_hidden = r.y_hidden;
    in.phase = Phase::kPrefill;
    in.placement = {graph::Placement::Kind::kBlock, static_cast<int>(b), pool};
    cache_in[b] = g.add(std::move(in));
  }
  const Graph decode = phase_graph(c, ServingPhase::kDecode, plan.kv_element_bytes);
  const int embedded = decode.at("in_emb.y"), sampled = decode.at("token.y");
  const int steps = plan.steps_from_one ? 1 : plan.decode_steps;
  for (int step = 0; step < steps; ++step) {
    // One token per request, attending over the context so far.
    Renames renames = one_token;
    if (!plan.steps_from_one) renames["Ctx"] = expr::Expr::constant(plan.first_context + step);
    const std::vector<int> at =
        append_phase(g, decode,
                     {"decode" + std::to_string(step) + ".", Phase::kDecode, step,
                      plan.steps_from_one ? 6 : -1, pool, shared_prefix},
                     renames);
    // The step embeds the token sampled before it.
    g.mutable_tensor(at[embedded]).extra_deps.push_back(token);
    g.mutable_tensor_keep_result(at[sampled]).feeds_next_step = true;
    if (plan.steps_from_one) g.mutable_tensor_keep_result(at[sampled]).succeeds = token;
    token = at[sampled];
    // Each block's attention waits for the cache it received.
    for (size_t b = 0; plan.disaggregated && b < c.spec.blocks.size(); ++b)
      g.mutable_tensor(
           at[decode.at(decoder_block_prefix(static_cast<int>(b)) + "mha.attn_kernel.qkv")])
          .extra_deps.push_back(cache_in[b]);
  }
  set_decoder_axes(m, c);
  return m;
}

}  // namespace stg::models
