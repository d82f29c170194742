// stg infer (docs/inference.md) against the textbook counts of serving a
// decoder: every expected figure below is computed in this file from the
// model dimensions and the plan, never by calling stg's functions. stg
// writes the traces, which are read back here with libprotobuf:
//   - a decode step's matrix products do 2 FLOPs per weight per token
//     (2 x the rank's parameters x its requests) and read each weight once;
//     its attention does 4 FLOPs per (request, cached token, query-head
//     dim) at context L = P + step + 1, and reads the K/V cache of L tokens;
//   - the prefill's matrix products and attention are the training forward
//     of P tokens, with the logits of the last token only;
//   - the per-phase figures stg prints (report/serving.h) equal the same
//     formulas, and the memory per rank is the weights and the cache of
//     P + D tokens; a plan that does not fit --hbm_gb is refused;
//   - every configuration (gpt, llama, moe, multi-head latent attention;
//     tp, pp, dp, ep; both frameworks; fp8 cache) passes stg validate
//     --replay.
// Dimensions are tiny (h 256, prompts of 32): each run takes milliseconds.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "stg/generate.h"
#include "stg/options.h"
#include "stg/tools/validate.h"
#include "support/run_stg.h"
#include "support/temp_dir.h"
#include "support/trace_reader.h"

namespace stg {
namespace {

// ---------------------------------------------------------------------------
// A llama-like decoder (grouped-query attention, gated MLP) and its plan.

struct Config {
  int64_t l = 2, h = 256, a = 8, g = 2, f = 512, V = 1024;  // blocks, dims, heads, KV heads
  int64_t R = 8, P = 32, D = 3;                             // requests, prompt, decode steps
  int64_t dp = 1, tp = 1, cp = 1;
  int64_t kv_bytes = 2;  // bf16, or 1 with --kv_dtype fp8

  int64_t hd() const { return h / a; }
  int64_t T() const { return R / dp; }  // requests of a replica
  // One rank's weights (elements): per block QKV, the output projection and
  // the gated MLP split over tp; the input embedding [V/tp, h] and the output
  // embedding [h/tp, V] (the reference's vocabulary layers, rows over tp).
  struct Weight {
    int64_t in, out;
  };
  std::vector<Weight> block_weights() const {
    return {
        {h, hd() * (a + 2 * g) / tp}, {hd() * a / tp, h}, {h, f / tp}, {h, f / tp}, {f / tp, h}};
  }
  int64_t block_params() const {
    int64_t p = 0;
    for (const Weight& w : block_weights()) p += w.in * w.out;
    return p;
  }
  int64_t embedding_params() const { return V / tp * h; }  // each of the two
  int64_t params() const { return l * block_params() + 2 * embedding_params(); }
  // The K/V cache a rank reads at context L: K and V of its KV heads, of
  // its 1/cp of every request's tokens.
  int64_t kv_read(int64_t L) const { return l * T() * L / cp * 2 * hd() * (g / tp) * kv_bytes; }
  int64_t context(int64_t step) const { return P + step + 1; }
};

Options options_of(const Config& c, const std::string& dir) {
  Options o;
  o.output_dir = dir;
  o.model = "llama";
  o.num_stacks = c.l;
  o.dmodel = c.h;
  o.dff = c.f;
  o.head = c.a;
  o.component_flags["--kvhead"] = c.g;
  o.dvocal = c.V;
  o.degree["dp"] = c.dp;
  o.degree["tp"] = c.tp;
  o.degree["sp"] = c.cp;
  o.threads = 2;
  Serving s;
  s.requests = c.R;
  s.prompt_len = c.P;
  s.decode_steps = c.D;
  s.kv_dtype = c.kv_bytes == 1 ? DType::kFp8 : DType::kBf16;
  o.serving = s;
  return o;
}

// ---------------------------------------------------------------------------
// Rank 0's trace, read back with libprotobuf.

using Node = stg_test::TraceNode;

std::vector<Node> read_rank(const std::string& path) { return stg_test::read_trace_nodes(path); }

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A phase's compute work on one rank, by kind of node.
struct PhaseSums {
  int64_t matmul_flops = 0, attention_flops = 0, other_flops = 0;
  int64_t matmul_bytes = 0, attention_bytes = 0;
  int64_t flops() const { return matmul_flops + attention_flops + other_flops; }
};

// `phase`: "prefill." or "decode<i>." as the node names hold it. A matrix
// product is an einsum (op M) that contracts, every one but the gated MLP's
// element-wise product; attention is the kernel's output node.
PhaseSums phase_sums(const std::vector<Node>& nodes, const std::string& phase) {
  PhaseSums s;
  for (const Node& n : nodes) {
    if (!n.compute || !contains(n.name, "." + phase)) continue;
    const auto bytes = static_cast<int64_t>(n.tensor_size);
    if (n.op_type == "M" && !contains(n.name, "ffn.xupgate")) {
      s.matmul_flops += n.num_ops;
      s.matmul_bytes += bytes;
    } else if (contains(n.name, "attn_kernel.qkv@")) {
      s.attention_flops += n.num_ops;
      s.attention_bytes += bytes;
    } else {
      s.other_flops += n.num_ops;
    }
  }
  return s;
}

struct Output {
  std::vector<Node> rank0;
  RunSummary summary;
};

Output generate_and_read(const Config& c) {
  stg_test::TempDir tmp({.prefix = "stg_infer", .keep_on_failure = true});
  const std::string dir = (tmp.path() / "out").string();
  Output run;
  run.summary = generate(options_of(c, dir));
  run.rank0 = read_rank(dir + "/workload.0.et");
  return run;
}

const report::PhaseFigures& phase(const RunSummary& s, const std::string& name) {
  for (const report::PhaseFigures& p : s.serving->stages.at(0).phases)
    if (p.phase == name) return p;
  throw std::runtime_error("no phase " + name);
}

// ---------------------------------------------------------------------------

class DecodeFormulas : public ::testing::TestWithParam<Config> {};

// Decode step i: 2 x parameters x requests for the matrix products, 4 x
// requests x L x query-head dims (per rank) for attention over L = P + i + 1
// tokens, per block; the weights read once, the cache of L tokens read.
TEST_P(DecodeFormulas, FlopsAndBytesReadPerStep) {
  const Config c = GetParam();
  const Output run = generate_and_read(c);
  for (int64_t step : {int64_t{0}, c.D - 1}) {
    SCOPED_TRACE("decode step " + std::to_string(step));
    const PhaseSums s = phase_sums(run.rank0, "decode" + std::to_string(step) + ".");
    const int64_t L = c.context(step);
    EXPECT_EQ(s.matmul_flops, 2 * c.params() * c.T());
    EXPECT_EQ(s.attention_flops, c.l * 4 * c.T() * L * (c.a / c.tp) * c.hd());
    // A product reads its weight and its token's input and writes its
    // output, 2 bytes an element; the weights sum to the rank's share.
    int64_t matmul_bytes = 0;
    for (const Config::Weight& w : c.block_weights())
      matmul_bytes += c.l * 2 * (w.in * w.out + c.T() * (w.in + w.out));
    for (const Config::Weight& w : {Config::Weight{c.V / c.tp, c.h}, {c.h / c.tp, c.V}})
      matmul_bytes += 2 * (w.in * w.out + c.T() * (w.in + w.out));
    EXPECT_EQ(s.matmul_bytes, matmul_bytes);
    // Attention reads the cache of L tokens and writes its output.
    EXPECT_EQ(s.attention_bytes, c.kv_read(L) + c.l * 2 * c.T() * (c.a / c.tp) * c.hd());
    // The rest (norms, residuals, the cache append, sampling) is small.
    EXPECT_LT(s.other_flops, s.flops() / 100);
    // The printed figures: the same FLOPs, the weights and the cache.
    const report::PhaseFigures& p = phase(run.summary, "decode " + std::to_string(step));
    EXPECT_EQ(p.flops, s.flops());
    EXPECT_EQ(p.weight_bytes, 2 * c.params());
    EXPECT_EQ(p.kv_bytes, c.kv_read(L));
  }
}

// The prefill: the training forward of P tokens per request (matrix
// products 2 x parameters x tokens, attention 4 x P^2 x query-head dims per
// request and block, no causal saving), logits of the last token only.
TEST_P(DecodeFormulas, PrefillIsTheForwardWithLastTokenLogits) {
  const Config c = GetParam();
  const Output run = generate_and_read(c);
  const PhaseSums s = phase_sums(run.rank0, "prefill.");
  const int64_t tokens = c.T() * c.P;
  EXPECT_EQ(s.matmul_flops, 2 * (c.l * c.block_params() + c.embedding_params()) * tokens +
                                2 * c.embedding_params() * c.T());
  EXPECT_EQ(s.attention_flops, c.l * 4 * c.T() * c.P * c.P * (c.a / c.tp) * c.hd());
  EXPECT_LT(s.other_flops, s.flops() / 100);
  EXPECT_EQ(phase(run.summary, "prefill").flops, s.flops());
  EXPECT_EQ(phase(run.summary, "prefill").kv_bytes, 0);
}

// Without the prefill the decode steps are the same: the caches hold the
// prompts already.
TEST(Infer, DecodeStepsWithoutPrefill) {
  Config c;
  c.tp = 2;
  stg_test::TempDir tmp({.prefix = "stg_infer"});
  Options o = options_of(c, (tmp.path() / "out").string());
  o.serving->prefill = false;
  const RunSummary s = generate(o);
  const std::vector<report::PhaseFigures>& phases = s.serving->stages.at(0).phases;
  ASSERT_EQ(phases.size(), 3u);  // decode 0, decode D-1, all decode steps
  EXPECT_EQ(phases[0].phase, "decode 0");
  const PhaseSums d = phase_sums(read_rank(o.output_dir + "/workload.0.et"), "decode0.");
  EXPECT_EQ(d.matmul_flops, 2 * c.params() * c.T());
  EXPECT_EQ(phases[0].kv_bytes, c.kv_read(c.context(0)));
  EXPECT_EQ(s.serving->stages.at(0).memory.kv_cache, c.kv_read(c.P + c.D));
}

// Context parallelism: each cp rank prefills P/cp tokens of every prompt
// (its queries against all P keys) and holds 1/cp of every cache; a decode
// step's tokens are split over the cp ranks for the matrix products, and
// every rank attends with all the step's queries over its part of the
// cache.
TEST(Infer, ContextParallelSplitsTheTokensAndTheCache) {
  Config c;
  c.cp = 2;
  c.P = 64;
  const Output run = generate_and_read(c);
  const PhaseSums prefill = phase_sums(run.rank0, "prefill.");
  EXPECT_EQ(prefill.matmul_flops,
            2 * (c.l * c.block_params() + c.embedding_params()) * c.T() * c.P / c.cp +
                2 * c.embedding_params() * c.T() / c.cp);
  EXPECT_EQ(prefill.attention_flops, c.l * 4 * c.T() * (c.P / c.cp) * c.P * c.a * c.hd());
  for (int64_t step : {int64_t{0}, c.D - 1}) {
    SCOPED_TRACE("decode step " + std::to_string(step));
    const PhaseSums s = phase_sums(run.rank0, "decode" + std::to_string(step) + ".");
    const int64_t L = c.context(step);
    EXPECT_EQ(s.matmul_flops, 2 * c.params() * c.T() / c.cp);
    // 4 x queries x (L / cp) cached tokens x query-head dims, exact when
    // the product is whole.
    EXPECT_EQ(s.attention_flops, c.l * 4 * c.T() * L * c.a * c.hd() / c.cp);
    EXPECT_EQ(phase(run.summary, "decode " + std::to_string(step)).kv_bytes, c.kv_read(L));
  }
  EXPECT_EQ(run.summary.serving->stages.at(0).memory.kv_cache, c.kv_read(c.P + c.D));
}

// Disaggregated (--disaggregate 1:1): the prefill on ranks 0-1 (tp 2), the
// decode steps on ranks 2-3; each prefill rank sends its decode rank the
// caches of the prompts (K and V of its KV heads, every block) and the
// first token, and holds caches of the prompt only.
TEST(Infer, DisaggregatedPoolsSendTheCaches) {
  Config c;
  c.tp = 2;
  stg_test::TempDir tmp({.prefix = "stg_infer", .keep_on_failure = true});
  Options o = options_of(c, (tmp.path() / "out").string());
  o.serving->prefill_replicas = o.serving->decode_replicas = 1;
  const RunSummary s = generate(o);
  EXPECT_EQ(s.ranks, 4);
  int64_t sent = 0;
  for (const Node& n : read_rank(o.output_dir + "/workload.0.et"))
    if (n.send) {
      EXPECT_EQ(n.peer, 2) << n.name;
      sent += n.comm_size;
    }
  const int64_t token_bytes = 2 * c.T();
  EXPECT_EQ(sent, c.kv_read(c.P) + token_bytes);
  ASSERT_EQ(s.serving->stages.size(), 2u);
  EXPECT_EQ(s.serving->stages[0].pool, "prefill pool");
  EXPECT_EQ(s.serving->stages[0].memory.kv_cache, c.kv_read(c.P));
  EXPECT_EQ(s.serving->stages[1].memory.kv_cache, c.kv_read(c.P + c.D));
  const report::PhaseFigures& first = s.serving->stages[1].phases.at(0);
  EXPECT_EQ(first.phase, "decode 0");
  EXPECT_EQ(first.weight_bytes, 2 * c.params());
  EXPECT_EQ(first.kv_bytes, c.kv_read(c.context(0)));
  const PhaseSums d = phase_sums(read_rank(o.output_dir + "/workload.2.et"), "decode0.");
  EXPECT_EQ(d.matmul_flops, 2 * c.params() * c.T());
}

// Memory per rank: the weights, the caches of P + D tokens.
TEST_P(DecodeFormulas, MemoryPerRank) {
  const Config c = GetParam();
  const Output run = generate_and_read(c);
  const report::ServingMemory& m = run.summary.serving->stages.at(0).memory;
  EXPECT_EQ(m.weights, 2 * c.params());
  EXPECT_EQ(m.kv_cache, c.kv_read(c.P + c.D));
  EXPECT_GT(m.activations, 0);
}

Config with(int64_t dp, int64_t tp, int64_t kv_bytes = 2) {
  Config c;
  c.dp = dp;
  c.tp = tp;
  c.kv_bytes = kv_bytes;
  return c;
}

INSTANTIATE_TEST_SUITE_P(Infer, DecodeFormulas,
                         ::testing::Values(with(1, 1), with(1, 2), with(2, 2), with(1, 2, 1)),
                         [](const ::testing::TestParamInfo<Config>& info) {
                           const Config& c = info.param;
                           return "dp" + std::to_string(c.dp) + "_tp" + std::to_string(c.tp) +
                                  (c.kv_bytes == 1 ? "_fp8" : "");
                         });

// Multi-head latent attention: the cache holds each token's latent and
// rotary key (KvLoraRank + QkRopeDim), whole on every tp rank; a decode
// step reads all of it.
TEST(Infer, LatentAttentionCachesTheLatent) {
  stg_test::TempDir tmp({.prefix = "stg_infer"});
  const int64_t l = 2, R = 8, P = 32, D = 2, kv_lora = 32, rope = 8, tp = 2;
  Options o;
  o.output_dir = (tmp.path() / "out").string();
  o.model = "deepseek";
  o.num_stacks = l;
  o.dense_blocks = l;  // dense blocks: the attention is the point here
  o.dmodel = 256;
  o.dff = 512;
  o.head = 8;
  o.dvocal = 1024;
  o.component_flags["--q_lora_rank"] = 64;
  o.component_flags["--kv_lora_rank"] = kv_lora;
  o.component_flags["--qk_nope_head_dim"] = 16;
  o.component_flags["--qk_rope_head_dim"] = rope;
  o.component_flags["--v_head_dim"] = 16;
  o.degree["tp"] = tp;
  o.serving = Serving{.requests = R, .prompt_len = P, .decode_steps = D};
  const RunSummary s = generate(o);
  const auto kv = [&](int64_t L) { return l * R * L * (kv_lora + rope) * 2; };
  EXPECT_EQ(phase(s, "decode 0").kv_bytes, kv(P + 1));
  EXPECT_EQ(phase(s, "decode 1").kv_bytes, kv(P + 2));
  EXPECT_EQ(s.serving->stages.at(0).memory.kv_cache, kv(P + D));
}

// Multi-head latent attention in a decode step (DeepSeek-V2 §2.1.2): the
// up-projection wkv_b is absorbed, W_UK (its key part) into each head's
// q_nope and W_UV (its value part) into the output, so a step computes no
// per-head keys or values. Its matrix products are then 2 FLOPs per weight
// per request (wkv_b once, as W_UK and W_UV), and its attention per block
// 2 x requests x heads/tp x L x ((KvLoraRank + QkRopeDim) for Q.K^T +
// KvLoraRank for P.V) at context L; each weight is read once.
struct MlaConfig {
  int64_t l = 2, h = 256, f = 512, a = 8, V = 1024;
  int64_t q_lora = 64, kv_lora = 32, nope = 16, rope = 8, v = 16;
  int64_t R = 8, P = 32, D = 2, tp = 1;
  // One rank's weights: wq_a and wkv_a whole on every tp rank; wq_b, wkv_b,
  // wo split by heads; the gated MLP; the two vocabulary layers.
  int64_t block_params() const {
    return h * q_lora + q_lora * (nope + rope) * a / tp + h * (kv_lora + rope) +
           kv_lora * (nope + v) * a / tp + v * a / tp * h + 3 * h * f / tp;
  }
  int64_t params() const { return l * block_params() + 2 * V / tp * h; }
};

Options options_of(const MlaConfig& c, const std::string& dir) {
  Options o;
  o.output_dir = dir;
  o.model = "deepseek";
  o.num_stacks = c.l;
  o.dense_blocks = c.l;
  o.dmodel = c.h;
  o.dff = c.f;
  o.head = c.a;
  o.dvocal = c.V;
  o.component_flags["--q_lora_rank"] = c.q_lora;
  o.component_flags["--kv_lora_rank"] = c.kv_lora;
  o.component_flags["--qk_nope_head_dim"] = c.nope;
  o.component_flags["--qk_rope_head_dim"] = c.rope;
  o.component_flags["--v_head_dim"] = c.v;
  o.degree["tp"] = c.tp;
  o.threads = 2;
  o.serving = Serving{.requests = c.R, .prompt_len = c.P, .decode_steps = c.D};
  return o;
}

TEST(Infer, LatentAttentionDecodeIsAbsorbed) {
  for (int64_t tp : {1, 2}) {
    SCOPED_TRACE("tp " + std::to_string(tp));
    MlaConfig c;
    c.tp = tp;
    stg_test::TempDir tmp({.prefix = "stg_infer_mla", .keep_on_failure = true});
    const Options o = options_of(c, (tmp.path() / "out").string());
    const RunSummary s = generate(o);
    const std::vector<Node> nodes = read_rank(o.output_dir + "/workload.0.et");
    for (int64_t step = 0; step < c.D; ++step) {
      SCOPED_TRACE("decode step " + std::to_string(step));
      const std::string name = "decode" + std::to_string(step) + ".";
      const PhaseSums sums = phase_sums(nodes, name);
      const int64_t L = c.P + step + 1;
      EXPECT_EQ(sums.matmul_flops, 2 * c.params() * c.R);
      EXPECT_EQ(sums.attention_flops,
                c.l * 2 * c.R * (c.a / tp) * L * ((c.kv_lora + c.rope) + c.kv_lora));
      // Norms, residuals, the cache append and sampling: small.
      EXPECT_LT(sums.other_flops, sums.flops() / 100);
      const report::PhaseFigures& p = phase(s, "decode " + std::to_string(step));
      EXPECT_EQ(p.flops, sums.flops());
      EXPECT_EQ(p.weight_bytes, 2 * c.params());  // bf16, each weight once
      EXPECT_EQ(p.kv_bytes, c.l * c.R * L * (c.kv_lora + c.rope) * 2);
      // None of the training graph's per-head K/V path (the expansion of
      // the latent by wkv_b, its key and value slices, the broadcast rotary
      // key) is written in a decode step.
      for (const Node& n : nodes)
        for (const char* t : {"kv", "k_nope", "v", "k_rope1", "k_rope", "k"})
          EXPECT_FALSE(contains(n.name, "." + name) &&
                       contains(n.name, std::string(".mha.") + t + "@"))
              << n.name;
    }
  }
}

// ---------------------------------------------------------------------------
// Every configuration is replayed to completion (stg validate --replay).

struct Plan {
  std::string name;
  Options options;
};

Options small(const std::string& model) {
  Options o;
  o.model = model;
  o.num_stacks = 4;
  o.dmodel = 256;
  o.dff = 512;
  o.head = 8;
  o.dvocal = 1024;
  if (model != "gpt") o.component_flags["--kvhead"] = 2;
  if (model == "moe") o.component_flags["--experts"] = 4;
  o.serving = Serving{.requests = 8, .prompt_len = 32, .decode_steps = 3};
  o.threads = 2;
  return o;
}

std::vector<Plan> plans() {
  std::vector<Plan> p;
  auto add = [&](const std::string& name, Options o, auto tweak) {
    tweak(o);
    p.push_back({name, o});
  };
  add("gpt_tp2_pp2", small("gpt"), [](Options& o) {
    o.degree["tp"] = 2;
    o.degree["pp"] = 2;
  });
  add("llama_dp2_tp2_pp2_fp8", small("llama"), [](Options& o) {
    o.degree["dp"] = 2;
    o.degree["tp"] = 2;
    o.degree["pp"] = 2;
    o.serving->kv_dtype = DType::kFp8;
  });
  add("llama_pp4_mb1", small("llama"), [](Options& o) {
    o.degree["pp"] = 4;
    o.micro_batch = 1;
  });
  add("moe_tp2_ep2", small("moe"), [](Options& o) {
    o.degree["tp"] = 2;
    o.degree["ep"] = 2;
  });
  add("moe_dp2_pp2_ep2_megatron", small("moe"), [](Options& o) {
    o.degree["dp"] = 2;
    o.degree["pp"] = 2;
    o.degree["ep"] = 2;
    o.framework = "megatron";
  });
  add("gpt_pp2_megatron_tied", small("gpt"), [](Options& o) {
    o.degree["pp"] = 2;
    o.framework = "megatron";
  });
  add("llama_prefill_only", small("llama"), [](Options& o) {
    o.degree["tp"] = 2;
    o.serving->decode_steps = 0;
  });
  add("llama_one_step_json", small("llama"), [](Options& o) {
    o.serving->decode_steps = 1;
    o.schema = emit::Schema::kJson;
  });
  add("llama_tp2_cp2_ring", small("llama"), [](Options& o) {
    o.degree["tp"] = 2;
    o.degree["sp"] = 2;
    o.cp_algo = "ring";
  });
  add("gpt_cp4_pp2_ulysses", small("gpt"), [](Options& o) {
    o.degree["sp"] = 4;
    o.degree["pp"] = 2;
    o.cp_algo = "ulysses";
  });
  add("llama_tp2_pp2_disaggregated", small("llama"), [](Options& o) {
    o.degree["tp"] = 2;
    o.degree["pp"] = 2;
    o.serving->prefill_replicas = o.serving->decode_replicas = 1;
  });
  add("moe_ep2_disaggregated_2_2", small("moe"), [](Options& o) {
    o.degree["ep"] = 2;
    o.serving->prefill_replicas = o.serving->decode_replicas = 2;
  });
  add("deepseek_tp2_cp2_absorbed", small("deepseek"), [](Options& o) {
    o.degree["tp"] = 2;
    o.degree["sp"] = 2;
    o.dense_blocks = 2;
  });
  add("llama_tp2_pp2_decode_only", small("llama"), [](Options& o) {
    o.degree["tp"] = 2;
    o.degree["pp"] = 2;
    o.serving->prefill = false;
  });
  return p;
}

class Replay : public ::testing::TestWithParam<Plan> {};

TEST_P(Replay, EveryRankCompletes) {
  stg_test::TempDir tmp({.prefix = "stg_infer", .keep_on_failure = true});
  Options o = GetParam().options;
  o.output_dir = (tmp.path() / "out").string();
  const RunSummary s = generate(o);
  tools::ValidateOptions vo;
  vo.threads = 2;
  vo.replay = true;
  const tools::ValidationReport r = tools::validate_dir(o.output_dir, vo);
  ASSERT_TRUE(r.replay.has_value()) << r.verdict();
  EXPECT_TRUE(r.replay->completed) << tools::replay_summary(*r.replay);
  EXPECT_EQ(r.violations(), 0) << r.verdict();
  EXPECT_EQ(r.nodes, s.nodes);
}

INSTANTIATE_TEST_SUITE_P(Infer, Replay, ::testing::ValuesIn(plans()),
                         [](const ::testing::TestParamInfo<Plan>& info) {
                           return info.param.name;
                         });

// ---------------------------------------------------------------------------
// Refusals: one line naming the flag, exit status 2, nothing written.

TEST(Infer, PlanOverTheGpuMemoryIsRefused) {
  stg_test::TempDir tmp({.prefix = "stg_infer"});
  Options o = small("llama");
  o.output_dir = (tmp.path() / "out").string();
  o.serving->hbm_gb = 0.001;  // 1 MB: the weights alone need more
  try {
    generate(o);
    FAIL() << "not refused";
  } catch (const UsageError& e) {
    EXPECT_TRUE(contains(e.what(), "more than --hbm_gb 0.001")) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(o.output_dir));
}

TEST(Infer, CommandLineRefusals) {
  stg_test::TempDir tmp({.prefix = "stg_infer"});
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--model_type", "llama", "--batch", "8"}, "--batch is the training batch"},
      {{"--model_type", "llama", "--seq", "8"}, "--seq is the training sequence"},
      {{"--model_type", "llama", "--kv_dtype", "int4"}, "--kv_dtype 'int4' is not valid"},
      {{"--model_type", "llama", "--requests", "6", "--micro_batch", "4"},
       "--requests 6 is not divisible by --micro_batch 4"},
      {{"--model_type", "llama", "--activation_recompute", "1"}, "--activation_recompute"},
      {{}, "stg infer needs a decoder model"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> args = {"infer", "--output_dir", (tmp.path() / "out").string()};
    args.insert(args.end(), flags.begin(), flags.end());
    const stg_test::RunResult r = stg_test::run_stg(args, tmp.path());
    EXPECT_EQ(r.status, 2) << message;
    EXPECT_TRUE(contains(r.err, message)) << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp.path() / "out")) << message;
  }
}

}  // namespace
}  // namespace stg
