// Tests of the 2025-26 model families (docs/models_2025.md): each new part
// on a small graph (QKV bias, head_dim, per-head q/k norms, expert width,
// shared experts, dense first blocks, multi-head latent attention), the
// presets' parameter counts against their model cards, and their FLOPs per
// token against the textbook count, both written out here from the
// published configs (not from stg's functions).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "stg/generate.h"
#include "stg/models/families/registry.h"
#include "stg/models/hf_config.h"
#include "stg/models/presets.h"
#include "stg/models/row_flag.h"
#include "stg/models/workload.h"
#include "stg/options.h"
#include "stg/passes/pipeline.h"
#include "stg/workloads/build_workload.h"
#include "support/temp_dir.h"

namespace stg {
namespace {

namespace fs = std::filesystem;

// The elements of tensor `name` of the model graph, its dims evaluated.
int64_t elements(const models::Workload& w, const std::string& name) {
  const graph::Graph& g = w.model.graph;
  const int i = g.find(name);
  EXPECT_GE(i, 0) << name;
  if (i < 0) return 0;
  int64_t n = 1;
  for (const expr::Expr& d : g.result(i).y_shape) n *= expr::whole_count(d, w.values, name);
  return n;
}

bool has(const models::Workload& w, const std::string& name) {
  return w.model.graph.find(name) >= 0;
}

Options small(const char* family) {
  Options o;
  o.model = models::find_family(family).name;
  o.dmodel = 64;
  o.dff = 96;
  o.head = 4;
  o.component_flags["--kvhead"] = 2;
  o.seq = 16;
  o.batch = 4;
  o.micro_batch = 4;
  o.dvocal = 256;
  o.num_stacks = 2;
  o.component_flags["--experts"] = 4;
  o.component_flags["--kexperts"] = 2;
  return o;
}

// ---------------------------------------------------------------------------
// Parts on small graphs.

TEST(Qwen, QkvBiasIsAWeightWithAGradient) {
  Options o = small("qwen2");
  o.degree["tp"] = 2;
  const models::Workload w = workloads::build_workload(o);
  const std::string p = "transformer.0.mha.";
  // [head_dim, (heads + 2 kv heads) / tp] = 16 x (4 + 4) / 2.
  EXPECT_EQ(elements(w, p + "bqkv"), 16 * 4);
  EXPECT_EQ(elements(w, p + "dbqkv"), 16 * 4);
  // Added to every element of Q, K and V: B/dp x S x 16 x 4.
  EXPECT_EQ(elements(w, p + "qkv_biased"), 4 * 16 * 16 * 4);
  EXPECT_FALSE(has(workloads::build_workload(small("llama")), p + "bqkv"));
}

TEST(Qwen, HeadDimOfItsOwn) {
  Options o = small("qwen3");
  o.component_flags["--head_dim"] = 32;  // not 64 / 4
  const models::Workload w = workloads::build_workload(o);
  const std::string p = "transformer.1.mha.";
  EXPECT_EQ(elements(w, p + "wqkv"), 64 * 32 * (4 + 2 * 2));
  EXPECT_EQ(elements(w, p + "wo"), 32 * 4 * 64);
  // The kernel's FLOPs under megatron are those of 32-wide heads.
  o.framework = "megatron";
  const models::Workload m = workloads::build_workload(o);
  const graph::Tensor& kernel = m.model.graph[m.model.graph.at(p + "attn_kernel.qkv")];
  // Q.K^T and P.V: 2 x 2 FLOPs per (query, key, head dim) triple, per head.
  EXPECT_EQ(expr::whole_count(kernel.flops, m.values, "kernel"), 2 * 2 * 4 * 16 * 16 * 32 * 4);
}

TEST(Qwen, PerHeadQkNorm) {
  const models::Workload w = workloads::build_workload(small("qwen3"));
  const std::string p = "transformer.0.mha.";
  ASSERT_TRUE(has(w, p + "q_normed"));
  ASSERT_TRUE(has(w, p + "k_normed"));
  // Q: B x S x head_dim x heads; K: ... x kv heads (head_dim 16 by default).
  EXPECT_EQ(elements(w, p + "q_normed"), 4 * 16 * 16 * 4);
  EXPECT_EQ(elements(w, p + "k_normed"), 4 * 16 * 16 * 2);
  EXPECT_FALSE(has(workloads::build_workload(small("qwen2")), p + "q_normed"));
}

TEST(Qwen, TiedEmbeddingsFromTheConfig) {
  stg_test::TempDir dir;
  const std::string tied = dir.write("tied.json", R"({"architectures": ["Qwen2ForCausalLM"],
      "hidden_size": 896, "intermediate_size": 4864, "num_attention_heads": 14,
      "num_key_value_heads": 2, "num_hidden_layers": 24, "vocab_size": 151936,
      "tie_word_embeddings": true})");
  Options o;
  models::apply_hf_config(tied, o);
  EXPECT_EQ(o.model_tied_embeddings, true);
  o.framework = "megatron";
  o.num_stacks = 2;
  o.seq = 64;
  o.batch = 1;
  const models::Workload w = workloads::build_workload(o);
  EXPECT_TRUE(w.decoder.tied_embeddings);
  Options untied;
  models::apply_hf_config(tied, untied);
  untied.model_tied_embeddings = false;
  untied.num_stacks = 2;
  EXPECT_FALSE(workloads::build_workload(untied).decoder.tied_embeddings);
}

TEST(Moe, ExpertWidthSharedExpertsAndDenseFirstBlocks) {
  Options o = small("qwen3-moe");
  o.num_stacks = 3;
  o.dense_blocks = 1;
  o.component_flags["--dff_expert"] = 32;
  o.component_flags["--shared_experts"] = 2;
  o.degree["ep"] = 2;
  for (const char* framework : {"reference", "megatron"}) {
    SCOPED_TRACE(framework);
    o.framework = framework;
    const models::Workload w = workloads::build_workload(o);
    // Block 0 dense (a gated MLP of Dff), blocks 1-2 MoE.
    EXPECT_EQ(elements(w, "transformer.0.ffn.wup"), 64 * 96);
    EXPECT_FALSE(has(w, "transformer.0.moe.wrouter"));
    for (const char* b : {"transformer.1.", "transformer.2."}) {
      const std::string p = b;
      EXPECT_FALSE(has(w, p + "ffn.wup"));
      // Experts / ep = 2 gated experts of DffExpert.
      EXPECT_EQ(elements(w, p + "moe.0.ffn.wup"), 64 * 32);
      EXPECT_EQ(elements(w, p + "moe.1.ffn.wgate"), 64 * 32);
      EXPECT_EQ(elements(w, p + "moe.1.ffn.wdown"), 32 * 64);
      EXPECT_FALSE(has(w, p + "moe.2.ffn.wup"));
      // The shared experts: one gated MLP of 2 x 32 on every token.
      EXPECT_EQ(elements(w, p + "moe.shared.wup"), 64 * 2 * 32);
      EXPECT_EQ(elements(w, p + "moe.shared.wdown"), 2 * 32 * 64);
      EXPECT_TRUE(has(w, p + "moe.y_with_shared"));
    }
  }
}

TEST(Moe, RefusesMoreDenseBlocksThanBlocks) {
  Options o = small("deepseek");
  o.dense_blocks = 3;
  try {
    workloads::build_workload(o);
    FAIL() << "accepted --dense_blocks 3 of 2 blocks";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--dense_blocks 3"), std::string::npos) << e.what();
  }
}

TEST(Mla, WeightShapesAsPublished) {
  Options o = small("deepseek");
  o.head = 4;
  o.component_flags["--q_lora_rank"] = 24;
  o.component_flags["--kv_lora_rank"] = 16;
  o.component_flags["--qk_nope_head_dim"] = 8;
  o.component_flags["--qk_rope_head_dim"] = 4;
  o.component_flags["--v_head_dim"] = 6;
  o.degree["tp"] = 2;
  o.degree["ep"] = 2;
  o.framework = "megatron";
  o.micro_batch = 4;
  const models::Workload w = workloads::build_workload(o);
  const std::string p = "transformer.0.mha.";
  // Down projections whole on every tp rank, up projections and the output
  // split by heads (4 / tp 2).
  EXPECT_EQ(elements(w, p + "wq_a"), 64 * 24);
  EXPECT_EQ(elements(w, p + "wq_b"), 24 * (8 + 4) * 2);
  EXPECT_EQ(elements(w, p + "wkv_a"), 64 * (16 + 4));
  EXPECT_EQ(elements(w, p + "wkv_b"), 16 * (8 + 6) * 2);
  EXPECT_EQ(elements(w, p + "wo"), 6 * 2 * 64);
  // Q and K of nope + rope dims, V of v dims (B/(dp ep) = 2 sequences).
  EXPECT_EQ(elements(w, p + "q"), 2 * 16 * 12 * 2);
  EXPECT_EQ(elements(w, p + "k"), 2 * 16 * 12 * 2);
  EXPECT_EQ(elements(w, p + "v"), 2 * 16 * 6 * 2);
  // The kernel: Q.K^T over 12 dims, P.V over 6, 2 FLOPs each per triple.
  const graph::Tensor& kernel = w.model.graph[w.model.graph.at(p + "attn_kernel.qkv")];
  EXPECT_EQ(expr::whole_count(kernel.flops, w.values, "kernel"), 2 * 16 * 16 * 2 * 2 * (12 + 6));
}

TEST(Mla, MemoryReportCountsTheLatents) {
  // Megatron's report per block: the latents (q 24 before and after its
  // norm, kv 16 + rope 4, kv 16 normed) whole on every tp rank, 2 bytes.
  Options o = small("deepseek");
  o.component_flags["--q_lora_rank"] = 24;
  o.component_flags["--kv_lora_rank"] = 16;
  o.component_flags["--qk_nope_head_dim"] = 8;
  o.component_flags["--qk_rope_head_dim"] = 4;
  o.component_flags["--v_head_dim"] = 6;
  o.framework = "megatron";
  o.print_gpu_vram = true;
  o.dense_blocks = 2;  // dense blocks only: the MLP term is Korthikanti's SwiGLU one
  stg_test::TempDir dir;
  o.output_dir = dir.path().string();
  const RunSummary with = generate(o);
  o.component_flags["--q_lora_rank"] = 48;
  const RunSummary wider = generate(o);
  ASSERT_EQ(with.memory.size(), 1u);
  // 24 more query-latent values per token, before and after the norm, 2
  // bytes each, B x S = 64 tokens, 2 blocks.
  EXPECT_DOUBLE_EQ(wider.memory[0].activations - with.memory[0].activations, 2.0 * 2 * 24 * 64 * 2);
}

// ---------------------------------------------------------------------------
// --pp_balance cost.

TEST(PpBalance, StagesByCostKeepTheMostCostlyStageLeast) {
  // Nine blocks of 1 and a last one of 1 + 1.6 (the output layer), over 3
  // stages: by count 4, 3, 3 (the last stage 4.6); by cost no stage above 4
  // (the total 11.6 needs one of at least 3.87, and blocks come whole).
  const std::vector<double> cost = {1, 1, 1, 1, 1, 1, 1, 1, 1, 2.6};
  EXPECT_EQ(passes::stages_by_cost(cost, 3), (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2}));
  // Alike costs: the count's split (earlier stages take the remainder).
  EXPECT_EQ(passes::stages_by_cost({1, 1, 1, 1, 1}, 2), (std::vector<int>{0, 0, 0, 1, 1}));
  // A costly first block gets a stage of its own.
  EXPECT_EQ(passes::stages_by_cost({5, 1, 1, 1}, 2), (std::vector<int>{0, 1, 1, 1}));
  for (int b = 0; b < 5; ++b) EXPECT_EQ(passes::stage_of_block(b, 5, 2), b < 3 ? 0 : 1);
}

TEST(PpBalance, DeepSeekLastStageLightensByCost) {
  // Eight blocks (one dense) on 4 stages: by count 2 each; by cost the
  // last stage, which also holds the output layer, takes fewer.
  auto blocks_on_last_stage = [](bool by_cost) {
    Options o = small("deepseek");
    o.dmodel = 64;
    o.dvocal = 4096;  // an output layer of several blocks' work
    o.component_flags["--q_lora_rank"] = o.component_flags["--kv_lora_rank"] = 16;
    o.component_flags["--qk_nope_head_dim"] = o.component_flags["--qk_rope_head_dim"] =
        o.component_flags["--v_head_dim"] = 8;
    o.num_stacks = 8;
    o.dense_blocks = 1;
    o.degree["pp"] = 4;
    o.framework = "megatron";
    o.pp_balance_cost = by_cost;
    o.print_gpu_vram = true;
    stg_test::TempDir dir;
    o.output_dir = dir.path().string();
    return generate(o).memory.back().blocks;
  };
  EXPECT_EQ(blocks_on_last_stage(false), 2);
  EXPECT_LT(blocks_on_last_stage(true), 2);
}

// ---------------------------------------------------------------------------
// Parameter counts against the model cards.

// The trainable parameters of one rank's model graph (FSDP off).
double parameters_per_rank(const Options& o) {
  const models::Workload w = workloads::build_workload(o);
  expr::Values v = w.values;
  v.by_symbol["fsdp"] = 1;
  v.by_symbol["gshard"] = 1;
  const graph::Graph& g = w.model.graph;
  double n = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const graph::Tensor& t = g[static_cast<int>(i)];
    if (t.role != graph::Role::kWeight || !t.require_grads || t.view) continue;
    double e = 1;
    for (const expr::Expr& d : g.result(static_cast<int>(i)).y_shape)
      e *= static_cast<double>(expr::whole_count(d, v, t.name));
    n += e;
  }
  return n;
}

struct Count {
  double total = 0, active = 0;
};

// From stg's graphs under megatron at tp 1: a dense model's weights; a MoE
// model's at ep = E and E/2, whose difference is the experts' share.
// `mtp_depth`: the preset's multi-token prediction modules (DeepSeek-V3:
// 1), or as given.
Count stg_parameters(const char* preset, std::optional<int64_t> mtp_depth = std::nullopt) {
  Options o;
  models::apply_preset(*models::find_preset(preset), o);
  if (mtp_depth) o.mtp_depth = mtp_depth;
  o.framework = "megatron";
  const int64_t experts = stg::models::row_flag(o, "--experts").value_or(0);
  if (experts == 0) {
    const double n = parameters_per_rank(o);
    return {n, n};
  }
  auto at_ep = [&](int64_t ep) {
    Options e = o;
    e.degree["ep"] = ep;
    e.batch = e.micro_batch = ep;
    return parameters_per_rank(e);
  };
  const double all = at_ep(experts), half = at_ep(experts / 2);
  const double routed = experts * (half - all);  // every routed expert of every block
  const double rest = all - routed / experts;
  return {rest + routed,
          rest + routed * static_cast<double>(*stg::models::row_flag(o, "--kexperts")) / experts};
}

void expect_within(double value, double expected, double tolerance, const char* what) {
  // The measured figures in the test report (--gtest_output=json).
  ::testing::Test::RecordProperty(std::string(what) + ": stg / expected",
                                  std::to_string(value) + " / " + std::to_string(expected));
  EXPECT_LT(std::abs(value / expected - 1), tolerance)
      << what << ": " << value / 1e9 << "B vs " << expected / 1e9 << "B";
}

// The model cards' figures (Hugging Face model cards; DeepSeek-V3 technical
// report abstract: 671B total, 37B activated, without the MTP module).
// DeepSeek-V3's README_WEIGHTS.md: the main model 671B, 36.6B activated
// including 0.9B of the output layer (so without the input embedding); the
// MTP module 11.5B unique parameters (without the embedding and the output
// layer it shares), 1.5B activated including the 0.9B output layer; the
// Hugging Face checkpoint 685B, the main model and the MTP module with its
// own stored copies of the embedding and the output layer.
TEST(Presets2025, ParametersMatchTheModelCards) {
  {
    const Count c = stg_parameters("qwen2.5-72b");
    expect_within(c.total, 72.7e9, 0.01, "qwen2.5-72b");
  }
  {
    const Count c = stg_parameters("qwen3-32b");
    expect_within(c.total, 32.8e9, 0.01, "qwen3-32b");
  }
  {
    const Count c = stg_parameters("qwen3-235b-a22b");
    expect_within(c.total, 235e9, 0.01, "qwen3-235b-a22b total");
    expect_within(c.active, 22e9, 0.01 + 0.5 / 22, "qwen3-235b-a22b active");
  }
  {
    const double embedding = 129280.0 * 7168;  // the input embedding, and the output layer
    const Count main = stg_parameters("deepseek-v3", 0);
    expect_within(main.total, 671e9, 0.01, "deepseek-v3 total");
    expect_within(main.active, 37e9, 0.01 + 0.5 / 37, "deepseek-v3 active");
    expect_within(main.active - embedding, 36.6e9, 0.01,
                  "deepseek-v3 active without the input embedding");
    const Count with_mtp = stg_parameters("deepseek-v3");  // the preset's one module
    expect_within(with_mtp.total - main.total, 11.5e9, 0.01, "deepseek-v3 MTP unique");
    expect_within(with_mtp.total, 671e9 + 11.5e9, 0.01, "deepseek-v3 total with MTP");
    expect_within(with_mtp.total + 2 * embedding, 685e9, 0.01,
                  "deepseek-v3 Hugging Face checkpoint");
    // Activated: the main model's 36.6B and the module's 1.5B, its output
    // layer (0.9B) counted once.
    expect_within(with_mtp.active - embedding, 36.6e9 + 1.5e9 - 0.9e9, 0.01,
                  "deepseek-v3 active with MTP, without the input embedding");
  }
}

// The same configs counted by hand, matrix by matrix (norms have no
// weights in stg's parts, nor here): stg's graph must give them exactly,
// up to the norms' absence (< 0.01%).
double llama_like_layer(double h, double heads, double kv, double hd, double f, bool bias) {
  const double attention = h * heads * hd + 2 * h * kv * hd + heads * hd * h;
  return attention + (bias ? (heads + 2 * kv) * hd : 0) + 3 * h * f;
}

double mla_attention(double h, double heads, double q_rank, double kv_rank, double nope,
                     double rope, double v) {
  return h * q_rank + q_rank * heads * (nope + rope) + h * (kv_rank + rope) +
         kv_rank * heads * (nope + v) + heads * v * h;
}

struct Textbook {
  double total, active, input_embedding, layers, attention_width;
};

Textbook textbook(const std::string& preset) {
  if (preset == "qwen2.5-72b") {
    const double e = 152064.0 * 8192;
    const double n = 80 * llama_like_layer(8192, 64, 8, 128, 29568, true) + 2 * e;
    return {n, n, e, 80, 64 * 128};
  }
  if (preset == "qwen3-32b") {
    const double e = 151936.0 * 5120;
    const double n = 64 * llama_like_layer(5120, 64, 8, 128, 25600, false) + 2 * e;
    return {n, n, e, 64, 64 * 128};
  }
  if (preset == "qwen3-235b-a22b") {
    const double e = 151936.0 * 4096, expert = 3.0 * 4096 * 1536;
    const double attention = llama_like_layer(4096, 64, 4, 128, 0, false), router = 4096.0 * 128;
    return {94 * (attention + router + 128 * expert) + 2 * e,
            94 * (attention + router + 8 * expert) + 2 * e, e, 94, 64 * 128};
  }
  // deepseek-v3, with its MTP module: eh_proj (2h x h) and one MoE block;
  // the embedding and the output layer are the model's.
  const double e = 129280.0 * 7168, expert = 3.0 * 7168 * 2048, dense = 3.0 * 7168 * 18432;
  const double attention = mla_attention(7168, 128, 1536, 512, 128, 64, 128);
  const double router = 7168.0 * 256, eh_proj = 2.0 * 7168 * 7168;
  return {3 * (attention + dense) + 58 * (attention + router + 257 * expert) + 2 * e + eh_proj +
              attention + router + 257 * expert,
          3 * (attention + dense) + 58 * (attention + router + 9 * expert) + 2 * e + eh_proj +
              attention + router + 9 * expert,
          e, 61,
          // MLA's attention width: heads x (q/k dims + v dims) / 2.
          128 * (128 + 64 + 128) / 2.0};
}

TEST(Presets2025, ParametersMatchTheTextbookCount) {
  for (const char* preset : {"qwen2.5-72b", "qwen3-32b", "qwen3-235b-a22b", "deepseek-v3"}) {
    SCOPED_TRACE(preset);
    const Count c = stg_parameters(preset);
    const Textbook t = textbook(preset);
    expect_within(c.total, t.total, 1e-4, (std::string(preset) + " total").c_str());
    expect_within(c.active, t.active, 1e-4, (std::string(preset) + " active").c_str());
  }
}

// ---------------------------------------------------------------------------
// FLOPs per token: 6 x the active parameters that multiply (all but the
// input embedding, a lookup) + attention 12·l·s·h_attn, against the FLOPs of
// stg's trace (every rank, one step, --framework megatron, no causal
// saving) over the step's tokens. Two blocks of each model keep the run
// small; the textbook count is taken for the same two blocks. DeepSeek-V3
// with and without its MTP module: the module adds its eh_proj (2h x h) and
// its block to the matrices, its block to l, and one more pass through
// the shared output layer (a weight used twice multiplies twice; the
// module's lookup of the embedding is not a product).
TEST(Presets2025, FlopsPerTokenMatchTheStandardCount) {
  struct Case {
    const char* preset;
    int64_t ep;
    int64_t mtp_depth;
  };
  for (const Case& k :
       {Case{"qwen2.5-72b", 1, 0}, Case{"qwen3-32b", 1, 0}, Case{"qwen3-235b-a22b", 8, 0},
        Case{"deepseek-v3", 8, 0}, Case{"deepseek-v3", 8, 1}}) {
    SCOPED_TRACE(std::string(k.preset) + " MTP depth " + std::to_string(k.mtp_depth));
    Options o;
    models::apply_preset(*models::find_preset(k.preset), o);
    if (k.mtp_depth == 0) o.mtp_depth = 0;
    const Textbook full = textbook(k.preset);
    // Per block of the full model, then two blocks (DeepSeek: one dense,
    // one MoE, as in the full model's ratio of the textbook count below).
    const bool deepseek = std::string(k.preset) == "deepseek-v3";
    o.num_stacks = 2;
    if (deepseek) o.dense_blocks = 1;
    o.framework = "megatron";
    o.degree["ep"] = k.ep;
    o.batch = o.micro_batch = 8;
    o.seq = 4096;
    stg_test::TempDir dir;
    o.output_dir = dir.path().string();
    o.trace_detail = emit::TraceDetail::kSim;
    const RunSummary run = generate(o);
    const double tokens = 8.0 * 4096;
    const double stg_flops = run.step.flops.total.as_double() / tokens;

    double active;  // the two blocks' active parameters and both embeddings
    double blocks = 2;
    if (deepseek) {
      const double expert = 3.0 * 7168 * 2048,
                   attention = mla_attention(7168, 128, 1536, 512, 128, 64, 128);
      const double moe_block = attention + 7168.0 * 256 + 9 * expert;
      active = attention + 3.0 * 7168 * 18432 + moe_block + 2 * full.input_embedding;
      // The MTP module: eh_proj, a MoE block, the output layer once more.
      active += k.mtp_depth * (2.0 * 7168 * 7168 + moe_block + full.input_embedding);
      blocks += static_cast<double>(k.mtp_depth);
    } else {
      active =
          (full.active - 2 * full.input_embedding) / full.layers * 2 + 2 * full.input_embedding;
    }
    const double matmuls = 6 * (active - full.input_embedding);
    const double attention = 12.0 * blocks * 4096 * full.attention_width;
    expect_within(
        stg_flops, matmuls + attention, 0.02,
        (std::string(k.preset) + " MTP " + std::to_string(k.mtp_depth) + " FLOPs per token")
            .c_str());
  }
}

// ---------------------------------------------------------------------------
// Hugging Face configs give the presets' models.

TEST(HfConfig2025, ConfigsGiveThePresets) {
  const fs::path data = fs::path(STG_TEST_DATA) / "hf";
  struct Pair {
    const char* file;
    const char* preset;
  };
  for (const Pair& p :
       {Pair{"qwen2_5_72b.json", "qwen2.5-72b"}, Pair{"qwen3_32b.json", "qwen3-32b"},
        Pair{"qwen3_235b_a22b.json", "qwen3-235b-a22b"}, Pair{"deepseek_v3.json", "deepseek-v3"}}) {
    SCOPED_TRACE(p.file);
    Options from_config, from_preset;
    models::apply_hf_config((data / p.file).string(), from_config);
    models::apply_preset(*models::find_preset(p.preset), from_preset);
    EXPECT_EQ(from_config.model, from_preset.model);
    EXPECT_EQ(from_config.dmodel, from_preset.dmodel);
    EXPECT_EQ(from_config.dff, from_preset.dff);
    EXPECT_EQ(from_config.head, from_preset.head);
    EXPECT_EQ(stg::models::row_flag(from_config, "--kvhead"),
              stg::models::row_flag(from_preset, "--kvhead"));
    EXPECT_EQ(from_config.num_stacks, from_preset.num_stacks);
    EXPECT_EQ(from_config.dvocal, from_preset.dvocal);
    EXPECT_EQ(stg::models::row_flag(from_config, "--experts"),
              stg::models::row_flag(from_preset, "--experts"));
    EXPECT_EQ(stg::models::row_flag(from_config, "--kexperts"),
              stg::models::row_flag(from_preset, "--kexperts"));
    EXPECT_EQ(stg::models::row_flag(from_config, "--dff_expert"),
              stg::models::row_flag(from_preset, "--dff_expert"));
    EXPECT_EQ(stg::models::row_flag(from_config, "--shared_experts"),
              stg::models::row_flag(from_preset, "--shared_experts"));
    EXPECT_EQ(from_config.dense_blocks.value_or(0), from_preset.dense_blocks.value_or(0));
    EXPECT_EQ(stg::models::row_flag(from_config, "--q_lora_rank"),
              stg::models::row_flag(from_preset, "--q_lora_rank"));
    EXPECT_EQ(stg::models::row_flag(from_config, "--kv_lora_rank"),
              stg::models::row_flag(from_preset, "--kv_lora_rank"));
    EXPECT_EQ(stg::models::row_flag(from_config, "--qk_nope_head_dim"),
              stg::models::row_flag(from_preset, "--qk_nope_head_dim"));
    EXPECT_EQ(stg::models::row_flag(from_config, "--qk_rope_head_dim"),
              stg::models::row_flag(from_preset, "--qk_rope_head_dim"));
    EXPECT_EQ(stg::models::row_flag(from_config, "--v_head_dim"),
              stg::models::row_flag(from_preset, "--v_head_dim"));
    EXPECT_EQ(from_config.model_tied_embeddings, from_preset.model_tied_embeddings);
    EXPECT_EQ(from_config.mtp_depth, from_preset.mtp_depth);
    // Qwen3's head_dim read; the others have heads of hidden / heads.
    EXPECT_EQ(stg::models::row_flag(from_config, "--head_dim"),
              stg::models::row_flag(from_preset, "--head_dim"));
  }
}

TEST(HfConfig2025, UnmodelledFieldsRefusedOrNotedByName) {
  stg_test::TempDir dir;
  const std::string base = R"("hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4,
      "num_key_value_heads": 2, "num_hidden_layers": 2, "vocab_size": 256, "num_experts": 4,
      "num_experts_per_tok": 2, "moe_intermediate_size": 32)";
  auto refused = [&](const std::string& extra, const std::string& field) {
    Options o;
    try {
      models::apply_hf_config(dir.write("c.json", R"({"architectures": ["Qwen3MoeForCausalLM"], )" +
                                                      base + extra + "}"),
                              o);
      ADD_FAILURE() << field << " accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  refused(R"(, "decoder_sparse_step": 2)", "'decoder_sparse_step'");
  refused(R"(, "mlp_only_layers": [1, 3])", "'mlp_only_layers'");
  Options first_dense;
  models::apply_hf_config(dir.write("d.json", R"({"architectures": ["Qwen3MoeForCausalLM"], )" +
                                                  base + R"(, "mlp_only_layers": [0]})"),
                          first_dense);
  EXPECT_EQ(first_dense.dense_blocks, 1);
  Options sliding;
  const auto notes =
      models::apply_hf_config(dir.write("s.json", R"({"architectures": ["Qwen2ForCausalLM"], )" +
                                                      base + R"(, "use_sliding_window": true})"),
                              sliding);
  // The note of use_sliding_window, and one for the fields a Qwen2 config
  // does not have (issue 33: a note for every field stg does not model).
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("use_sliding_window"), std::string::npos);
  EXPECT_NE(notes[1].find("does not model"), std::string::npos) << notes[1];
  EXPECT_NE(notes[1].find("moe_intermediate_size 32, num_experts 4, num_experts_per_tok 2"),
            std::string::npos)
      << notes[1];
}

}  // namespace
}  // namespace stg
