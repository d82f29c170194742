#include "stg/models/inference_decoder.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "stg/models/blocks/frame.h"
#include "stg/models/forward_graph.h"
#include "stg/models/parts/dims.h"
#include "stg/models/parts/embeddings.h"
#include "stg/models/parts/kv_cache.h"

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
                            c.choices, /*last_token=*/phase == ServingPhase::kPrefill);
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

// Disaggregated pools: the prefix of a pool's names (its weights, caches
// and phases): none for the one prefill pool, "decode_pool." for the one
// decode pool, numbered when there are several.
std::string prefill_pool_prefix(int i, int count) {
  return count == 1 ? "" : "prefill_pool" + std::to_string(i) + ".";
}
std::string decode_pool_prefix(int j, int count) {
  return count == 1 ? "decode_pool." : "decode_pool" + std::to_string(j) + ".";
}

// A pool's share of the requests in its place when `count` pools share
// them: the batch its graphs see.
void add_pool_batch(std::map<std::string, expr::Expr>& renames, int count) {
  if (count > 1) renames["Batch"] = dims().batch / c(count);
}

// The requests of a place cut into prefills x decodes equal units: prefill
// pool i serves units [i * decodes, (i + 1) * decodes), decode pool j units
// [j * prefills, (j + 1) * prefills); how many both serve.
int shared_units(int i, int j, int prefills, int decodes) {
  const int from = std::max(i * decodes, j * prefills);
  const int to = std::min((i + 1) * decodes, (j + 1) * prefills);
  return std::max(0, to - from);
}

// `units` of the `of` units of requests of `whole` (a prefill pool's
// tensor, requests first): a view of them (no copy) that a decode pool
// receives; `whole` itself when it is all of them.
int requests_part(Graph& g, int whole, int units, int of, const std::string& name) {
  if (units == of) return whole;
  const graph::OpResult r = g.result(whole);
  Tensor part;
  part.name = name;
  part.op = graph::Op::kIdentity;
  part.x1 = whole;
  part.x1_shape = r.y_shape;
  (*part.x1_shape)[0] = r.y_shape[0] * c(units) / c(of);
  part.x1_hidden = r.y_hidden;
  part.phase = graph::Phase::kPrefill;
  part.placement = g[whole].placement;
  return g.add(std::move(part));
}

// A prefill pool in the graph: where its phase's tensors are, its token.
struct PrefillPool {
  std::vector<int> at;
  int token = -1;
};

// Decode pool `j` of `decodes` in the graph: its pool, the prefix of its
// weights and caches and of its steps' names, and the batch of its graphs.
struct DecodePool {
  int j = 0, prefills = 1, decodes = 1;
  int pool = 0;
  std::string shared_prefix, steps_prefix;
  // Names the part of a prefill pool's tensor sent here (a part of it).
  std::string sent_to;
  std::map<std::string, expr::Expr> one_token;
};

DecodePool decode_pool(const ServingPlan& plan, int prefills, int j) {
  DecodePool d;
  d.j = j;
  d.prefills = prefills;
  d.decodes = plan.disaggregated ? plan.decode_pools : 1;
  d.one_token = {{"Seq", expr::Expr::constant(1)}};
  add_pool_batch(d.one_token, d.decodes);
  d.pool = plan.disaggregated ? prefills + j : 0;
  d.shared_prefix = plan.disaggregated ? decode_pool_prefix(j, d.decodes) : "";
  d.steps_prefix = d.decodes > 1 ? d.shared_prefix : "";
  d.sent_to = ".for_decode_pool" + std::to_string(j);
  return d;
}

// Disaggregated: the decode pool has weights and caches of its own, and
// receives its first tokens with the caches from the prefill pools.
// Returns the received tokens.
int receive_first_tokens(Graph& g, const DecodePool& d, const std::vector<PrefillPool>& prefilled) {
  std::vector<int> parts;
  for (int i = 0; i < d.prefills; ++i)
    if (const int units = shared_units(i, d.j, d.prefills, d.decodes))
      parts.push_back(requests_part(g, prefilled[i].token, units, d.decodes,
                                    g[prefilled[i].token].name + d.sent_to));
  const Graph first = prompt_tokens();
  const std::vector<int> at = append_phase(
      g, first,
      {d.shared_prefix + "first.", graph::Phase::kPrefill, 0, -1, d.pool, d.shared_prefix},
      d.one_token);
  const int received = at[first.at("token.y")];
  for (int part : parts) g.mutable_tensor(received).extra_deps.push_back(part);
  g.mutable_tensor_keep_result(received).feeds_next_step = true;
  return received;
}

// Disaggregated: each block's cache, as each prefill pool's rank of the
// block wrote it (the part of the requests both serve), received once by
// the decode pool's rank of the block (before any decode step: the
// receives of a micro-batch's decode steps come after it). Returns the
// receives of each block.
std::vector<std::vector<int>> receive_caches(Graph& g, const DecoderConfig& c, const DecodePool& d,
                                             const Graph& prefill,
                                             const std::vector<PrefillPool>& prefilled) {
  std::vector<std::vector<int>> cache_in(c.spec.blocks.size());
  for (size_t b = 0; b < c.spec.blocks.size(); ++b) {
    const std::string name =
        decoder_block_prefix(static_cast<int>(b)) + mixer_tensor(c.spec.blocks[b], kStateWritePort);
    for (int i = 0; i < d.prefills; ++i) {
      const int units = shared_units(i, d.j, d.prefills, d.decodes);
      if (units == 0) continue;
      const int written = prefilled[i].at[prefill.at(name)];
      const int sent = requests_part(g, written, units, d.decodes, g[written].name + d.sent_to);
      const graph::OpResult& r = g.result(sent);
      Tensor in;
      in.name = d.shared_prefix + "received." + prefill_pool_prefix(i, d.prefills) + name;
      in.op = graph::Op::kIdentity;
      in.x1 = sent;
      in.x1_shape = r.y_shape;
      in.x1_hidden = r.y_hidden;
      in.phase = graph::Phase::kPrefill;
      in.placement = {graph::Placement::Kind::kBlock, static_cast<int>(b), d.pool};
      cache_in[b].push_back(g.add(std::move(in)));
    }
  }
  return cache_in;
}

// The decode steps, the first after `token`, each block's attention after
// the caches it received (`cache_in`).
void append_decode_steps(Graph& g, const DecoderSpec& spec, const ServingPlan& plan,
                         const DecodePool& d, const Graph& decode, int token,
                         const std::vector<std::vector<int>>& cache_in) {
  const int embedded = decode.at("in_emb.y"), sampled = decode.at("token.y");
  const int steps = plan.steps_from_one ? 1 : plan.decode_steps;
  for (int step = 0; step < steps; ++step) {
    // One token per request, attending over the context so far.
    std::map<std::string, expr::Expr> renames = d.one_token;
    if (!plan.steps_from_one) renames["Ctx"] = expr::Expr::constant(plan.first_context + step);
    // Names "decode<step>.": the step number after "decode".
    const std::string named = d.steps_prefix + "decode";
    const int step_at = plan.steps_from_one ? static_cast<int>(named.size()) : -1;
    const std::vector<int> at =
        append_phase(g, decode,
                     {named + std::to_string(step) + ".", graph::Phase::kDecode, step, step_at,
                      d.pool, d.shared_prefix},
                     renames);
    // The step embeds the token sampled before it.
    g.mutable_tensor(at[embedded]).extra_deps.push_back(token);
    g.mutable_tensor_keep_result(at[sampled]).feeds_next_step = true;
    if (plan.steps_from_one) g.mutable_tensor_keep_result(at[sampled]).succeeds = token;
    token = at[sampled];
    // Each block's attention waits for the caches it received.
    for (size_t b = 0; b < cache_in.size(); ++b)
      for (int in : cache_in[b])
        g.mutable_tensor(at[decode.at(decoder_block_prefix(static_cast<int>(b)) +
                                      mixer_tensor(spec.blocks[b], kStateReadPort))])
            .extra_deps.push_back(in);
  }
}

// Decode pool `j`'s steps, after its first tokens and each block's cache
// of the prompts received from the prefill pools that served its requests
// (disaggregated), else after the prefill on the same ranks.
void append_decode_pool(Graph& g, const DecoderConfig& c, const ServingPlan& plan,
                        const Graph& prefill, const std::vector<PrefillPool>& prefilled,
                        const Graph& decode, int j) {
  const DecodePool d = decode_pool(plan, static_cast<int>(prefilled.size()), j);
  int token = prefilled[0].token;
  std::vector<std::vector<int>> cache_in(c.spec.blocks.size());
  if (plan.disaggregated) {
    token = receive_first_tokens(g, d, prefilled);
    cache_in = receive_caches(g, c, d, prefill, prefilled);
  }
  append_decode_steps(g, c.spec, plan, d, decode, token, cache_in);
}

}  // namespace

Model build_inference_decoder(const DecoderConfig& config, const ServingPlan& plan) {
  const DecoderConfig& c = config;
  using graph::Phase;
  using Renames = std::map<std::string, expr::Expr>;
  Model m;
  Graph& g = m.graph;
  const int prefills = plan.disaggregated ? plan.prefill_pools : 1;
  // The prefill, or the prompts' last tokens without one. A prefill pool
  // of its own holds caches of the prompt only.
  const Graph prefill = plan.prefill ? phase_graph(c, ServingPhase::kPrefill, plan.kv_element_bytes)
                                     : prompt_tokens();
  Renames prefill_renames;
  if (!plan.prefill) prefill_renames["Seq"] = expr::Expr::constant(1);
  if (plan.disaggregated) prefill_renames["CacheTokens"] = dims().seq;
  add_pool_batch(prefill_renames, prefills);
  std::vector<PrefillPool> prefilled;
  for (int i = 0; i < prefills; ++i) {
    const std::string pool = prefill_pool_prefix(i, prefills);
    PrefillPool p;
    p.at = append_phase(
        g, prefill,
        {pool + (plan.prefill ? "prefill." : "prompt."), Phase::kPrefill, 0, -1, i, pool},
        prefill_renames);
    p.token = p.at[prefill.at("token.y")];
    g.mutable_tensor_keep_result(p.token).feeds_next_step = true;
    prefilled.push_back(std::move(p));
  }
  if (plan.decode_steps > 0) {
    const Graph decode = phase_graph(c, ServingPhase::kDecode, plan.kv_element_bytes);
    for (int j = 0; j < (plan.disaggregated ? plan.decode_pools : 1); ++j)
      append_decode_pool(g, c, plan, prefill, prefilled, decode, j);
  }
  set_decoder_axes(m, c);
  return m;
}

}  // namespace stg::models
