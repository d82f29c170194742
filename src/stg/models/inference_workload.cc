// `stg infer`'s workload (docs/inference.md): a decoder family's model and
// parallel plan serving Options::serving's requests. The decoder's flags are
// checked and bound as for training (models/decoder_workload.cc) with the
// requests as its batch and a prompt as its sequence; the graph is a serving
// iteration's (models/inference_decoder.h) and the run forward-only
// (Workload::forward_run; workloads/forward_only.h makes its kind), its
// decode steps written from one.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "stg/models/families/registry.h"
#include "stg/models/flag_binding.h"
#include "stg/models/inference_decoder.h"

namespace stg::models {

namespace {

// Decode steps: each is written from one (lower/flat_stage.h), so the
// bound is the trace's, not memory's (a 32-bit comm_tag per step).
constexpr int64_t kMaxDecodeSteps = 1000000;

// Disaggregated pools (each a copy of the plan's graph): a bound well
// above serving's prefill-to-decode ratios.
constexpr int64_t kMaxPools = 64;

// Training flags, refused by name: a serving iteration has no backward pass,
// optimizer or pipeline schedule of its own. (--batch and --seq, which a
// preset may set, are replaced by the requests and the prompt length; the
// command line refuses them when given.)
void refuse_training_flags(const Options& o) {
  require(!o.weight_sharded && o.zero_stage.value_or(0) == 0,
          "--weight_sharded and --zero_stage shard training state: drop them for stg infer");
  require(!o.activation_recompute,
          "--activation_recompute recomputes for a backward pass: drop it for stg infer");
  require(o.pipeline_schedule == lower::Schedule::kNone && o.virtual_stages == 1,
          "--pipeline_schedule orders training's forward and backward passes: drop it, stg infer "
          "runs the prefill and each decode step in turn, micro-batch after micro-batch");
  require(!o.mixed_precision,
          "--mixed_precision is the reference's training memory accounting: "
          "drop it for stg infer (--dtype sets the element size)");
  require(!o.print_gpu_vram,
          "--print_gpu_vram is the training memory report: drop it, stg infer "
          "prints its own (weights, KV cache, activations per rank)");
  require(o.module_csv.empty(),
          "--module_csv is a training graph: stg infer needs a decoder "
          "model (--model_type gpt, llama, moe, ... or --model NAME)");
}

void check_serving(const Serving& s) {
  require(s.requests >= 1, "--requests " + num(s.requests) + " is not valid: use >= 1");
  require(s.prompt_len >= 1, "--prompt_len " + num(s.prompt_len) + " is not valid: use >= 1");
  require(s.decode_steps >= 0 && s.decode_steps <= kMaxDecodeSteps,
          "--decode_steps " + num(s.decode_steps) + " is not valid: use 0 (the prefill only) to " +
              num(kMaxDecodeSteps));
  require(s.prefill || s.decode_steps > 0,
          "--prefill 0 with --decode_steps 0 serves nothing: give decode steps or the prefill");
}

// "--FLAG N does not split evenly over --disaggregate P:D ...": a refusal.
std::string uneven_pools(const Serving& s, const std::string& flag, int64_t n, int64_t multiple,
                         const std::string& of_what) {
  return flag + " " + num(n) + " does not split evenly over --disaggregate " +
         num(s.prefill_replicas) + ":" + num(s.decode_replicas) +
         " (each prefill and each decode replica serves an equal share of " + of_what +
         "): use a multiple of " + num(multiple);
}

// Requests per micro-batch: --micro_batch, else the requests split over the
// pipeline stages when they divide (so that the stages overlap), else all.
// With disaggregated pools each replica's requests of a micro-batch are cut
// into `pieces` (prefill pools x decode pools) equal parts.
int64_t requests_per_micro_batch(const Options& o, const Serving& s, int64_t pieces) {
  const int64_t dp = o.degree["dp"], pp = o.degree.stages();
  if (o.micro_batch && *o.micro_batch != -1) {
    const int64_t micro = *o.micro_batch;
    require(micro >= 1 && s.requests % micro == 0,
            "--requests " + num(s.requests) + " is not divisible by --micro_batch " + num(micro) +
                ": choose requests per micro-batch that divide the requests");
    require(micro % dp == 0, "--micro_batch " + num(micro) + " is not divisible by --dp " +
                                 num(dp) + ": each replica serves a whole share of a micro-batch");
    require((micro / dp) % pieces == 0,
            uneven_pools(s, "--micro_batch", micro, dp * pieces, "every micro-batch"));
    return micro;
  }
  if (pp > 1 && s.requests % pp == 0 && (s.requests / pp) % (dp * pieces) == 0)
    return s.requests / pp;
  require(!s.disaggregated() || s.requests % (dp * pieces) == 0,
          uneven_pools(s, "--requests", s.requests, dp * pieces, "the requests"));
  require(s.requests % dp == 0, "--requests " + num(s.requests) + " is not divisible by --dp " +
                                    num(dp) + ": each replica serves a whole share");
  return s.requests;
}

// Context parallelism (and, with --tpsp 1, tp) splits the prompt's tokens
// and a decode step's one token per request: each rank needs a whole share.
// `decode_pools`: the disaggregated decode pools that share a replica's
// requests.
void check_token_splits(const Options& o, const Serving& s, int64_t micro, bool tpsp,
                        int64_t decode_pools) {
  const int64_t cp = o.degree["sp"], split = cp * (tpsp ? o.degree["tp"] : 1);
  const std::string by = tpsp ? "--cp x --tp = " + num(split) : "--cp " + num(cp);
  require(s.prompt_len % split == 0, "--prompt_len " + num(s.prompt_len) + " is not divisible by " +
                                         by + ": each rank prefills a whole share of every prompt");
  const int64_t requests = micro / o.degree["dp"] / decode_pools;
  require(s.decode_steps == 0 || requests % split == 0,
          "the " + num(requests) + " requests of a micro-batch per replica (--micro_batch / --dp" +
              (decode_pools > 1 ? " / the decode pools" : "") + ") " + "are not divisible by " +
              by + ": each rank decodes a whole share of their tokens");
}

}  // namespace

Workload inference_workload(const Options& o, const DecoderPolicy& f, bool steps_from_one) {
  const Serving& s = *o.serving;
  refuse_training_flags(o);
  check_serving(s);
  const Family& family = family_of(o);
  require(family.decoder != nullptr,
          "stg infer needs a decoder model: give --model_type (gpt, llama, moe, ...) or --model "
          "NAME (stg models lists them)");
  // The decoder's flags with the serving figures in their place; MoE
  // blocks need their activations split over tp (--tpsp 1), dense ones
  // default to tp's all-reduces.
  Options d = o;
  d.batch = s.requests;
  d.seq = s.prompt_len;
  // Disaggregated P:D: gcd(P, D) replicas of the plan in every pool (more
  // data parallelism), P / gcd prefill pools and D / gcd decode pools.
  int64_t prefill_pools = 1, decode_pools = 1;
  if (s.disaggregated()) {
    require(s.prefill && s.decode_steps > 0,
            "--disaggregate puts the prefill and the decode steps on pools of their own: give "
            "both (--prefill 1 and --decode_steps >= 1)");
    const int64_t shared = std::gcd(s.prefill_replicas, s.decode_replicas);
    prefill_pools = s.prefill_replicas / shared;
    decode_pools = s.decode_replicas / shared;
    require(prefill_pools + decode_pools <= kMaxPools,
            "--disaggregate " + num(s.prefill_replicas) + ":" + num(s.decode_replicas) + " needs " +
                num(prefill_pools + decode_pools) + " pools of the plan's stages: use at most " +
                num(kMaxPools) + " (P and D with a larger common divisor)");
    d.degree["dp"] *= shared;
  }
  d.micro_batch = requests_per_micro_batch(d, s, prefill_pools * decode_pools);
  const int64_t stacks = o.num_stacks.value_or(80);  // as decoder_workload reads it
  require(stacks >= 1, "--num_stacks " + num(stacks) + " is not valid: use >= 1");
  const bool moe = family.decoder(o, static_cast<int>(stacks)).any(BlockKind::kMoe);
  d.tpsp = o.tpsp.value_or(moe);
  check_token_splits(d, s, *d.micro_batch, *d.tpsp, decode_pools);
  ServingPlan plan;
  plan.prefill = s.prefill;
  plan.decode_steps = static_cast<int>(s.decode_steps);
  plan.steps_from_one = steps_from_one;
  plan.first_context = s.prompt_len + 1;
  plan.kv_element_bytes = static_cast<int>(dtype_bytes(s.kv_dtype));
  plan.disaggregated = s.disaggregated();
  plan.prefill_pools = static_cast<int>(prefill_pools);
  plan.decode_pools = static_cast<int>(decode_pools);
  Workload w = decoder_workload(
      d, f, family, [&](const DecoderConfig& c) { return build_inference_decoder(c, plan); });
  // Decode step 0 attends over the prompt and its own token; the cache
  // holds the prompt and every step's token.
  w.values.by_symbol["Ctx"] = s.prompt_len + 1;
  w.values.by_symbol["CacheTokens"] = s.prompt_len + s.decode_steps;
  std::vector<lower::Step> phases = {{graph::Phase::kPrefill, 0, 0, 0}};
  const int64_t built = steps_from_one ? std::min<int64_t>(1, s.decode_steps) : s.decode_steps;
  for (int step = 0; step < built; ++step) phases.push_back({graph::Phase::kDecode, step, 0, 0});
  const int64_t from_one = steps_from_one ? std::max<int64_t>(1, s.decode_steps) : 1;
  w.forward_run = ForwardRun{std::move(phases), static_cast<int>(from_one), "Ctx"};
  if (s.disaggregated()) {
    // Pools of the plan's stages: the prefill pools', then the decode
    // pools' (the comm-group file covers them all). No training groups.
    w.pools = static_cast<int>(prefill_pools + decode_pools);
    w.prefill_pools = static_cast<int>(prefill_pools);
    w.mesh = mesh::Mesh(w.mesh.axes(), w.pools * w.mesh.stages());
    w.embedding_group = -1;
  }
  return w;
}

}  // namespace stg::models
