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

// Appends `module` (a phase's graph) under `prefix`, its tensors marked as
// the phase `phase`, step `step` (the step number at `step_at` of their
// names, or -1), symbols renamed; its weights and caches are the ones
// already in `g` of the same name (added the first time). Returns where each
// tensor of `module` is in `g`.
std::vector<int> append_phase(Graph& g, const Graph& module, const std::string& prefix,
                              graph::Phase phase, int step, int step_at,
                              const std::map<std::string, expr::Expr>& renames) {
  const int n = static_cast<int>(module.size());
  std::vector<int> index(n, -1);
  std::vector<bool> added(n, false);
  int next = static_cast<int>(g.size());
  for (int i = 0; i < n; ++i) {
    const int found = shared(module[i]) ? g.find(module[i].name) : -1;
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
    if (!shared(t)) {
      t.name = prefix + t.name;
      t.step_at = step_at;
      t.phase = phase;
      t.phase_step = step;
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
  Model m;
  Graph& g = m.graph;
  using graph::Phase;
  const Graph prefill = plan.prefill ? phase_graph(c, ServingPhase::kPrefill, plan.kv_element_bytes)
                                     : prompt_tokens();
  const std::map<std::string, expr::Expr> one_token = {{"Seq", expr::Expr::constant(1)}};
  int token = append_phase(
      g, prefill, plan.prefill ? "prefill." : "prompt.", Phase::kPrefill, 0, -1,
      plan.prefill ? std::map<std::string, expr::Expr>{} : one_token)[prefill.at("token.y")];
  if (plan.decode_steps > 0) {
    const Graph decode = phase_graph(c, ServingPhase::kDecode, plan.kv_element_bytes);
    const int embedded = decode.at("in_emb.y"), sampled = decode.at("token.y");
    const int steps = plan.steps_from_one ? 1 : plan.decode_steps;
    for (int step = 0; step < steps; ++step) {
      // One token per request, attending over the context so far.
      std::map<std::string, expr::Expr> renames = one_token;
      if (!plan.steps_from_one) renames["Ctx"] = expr::Expr::constant(plan.first_context + step);
      const std::string prefix = "decode" + std::to_string(step) + ".";
      const std::vector<int> at = append_phase(g, decode, prefix, Phase::kDecode, step,
                                               plan.steps_from_one ? 6 : -1, renames);
      // The step embeds the token sampled before it.
      g.mutable_tensor(at[embedded]).extra_deps.push_back(token);
      if (plan.steps_from_one) g.mutable_tensor_keep_result(at[sampled]).succeeds = token;
      token = at[sampled];
    }
  }
  set_decoder_axes(m, c);
  return m;
}

}  // namespace stg::models
