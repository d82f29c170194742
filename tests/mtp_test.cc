// Multi-token prediction (--mtp_depth; DeepSeek-V3 technical report §2.2,
// models/blocks/mtp_module.h): each module's weights and shapes on a small
// DeepSeek, the input embedding and the output layer shared with the model
// (a view on one stage, a tied copy on the last stage when the ends are
// apart), the modules on the last stage and recomputed like blocks, the
// megatron memory report's extra activations from Korthikanti's count
// written here, and the Hugging Face field. The figures are written out
// from the dimensions, not taken from stg's functions.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "stg/generate.h"
#include "stg/models/families/registry.h"
#include "stg/models/hf_config.h"
#include "stg/models/presets.h"
#include "stg/models/workload.h"
#include "stg/options.h"
#include "stg/passes/pipeline.h"
#include "stg/passes/recompute.h"
#include "stg/workloads/build_workload.h"
#include "support/small_dims.h"
#include "support/temp_dir.h"

namespace stg {
namespace {

const graph::Tensor* find(const models::Workload& w, const std::string& name) {
  const int i = w.model.graph.find(name);
  return i < 0 ? nullptr : &w.model.graph[i];
}

// The elements of tensor `name` of the model graph, its dims evaluated
// (FSDP and ZeRO shards at 1).
int64_t elements(const models::Workload& w, const std::string& name) {
  const graph::Graph& g = w.model.graph;
  const int i = g.find(name);
  EXPECT_GE(i, 0) << name;
  if (i < 0) return 0;
  expr::Values v = w.values;
  v.by_symbol["fsdp"] = v.by_symbol["gshard"] = 1;
  int64_t n = 1;
  for (const expr::Expr& d : g.result(i).y_shape) n *= expr::whole_count(d, v, name);
  return n;
}

// The trainable parameters of one rank's graph (views of a flat buffer or
// of another weight are not parameters of their own).
int64_t parameters(const models::Workload& w) {
  int64_t n = 0;
  for (size_t i = 0; i < w.model.graph.size(); ++i) {
    const graph::Tensor& t = w.model.graph[static_cast<int>(i)];
    if (t.role == graph::Role::kWeight && t.require_grads && !t.view) n += elements(w, t.name);
  }
  return n;
}

// DeepSeek in small: hidden 64, MLA with ranks 32 / 16 and heads of 16 + 8
// (v 16), one dense block of 128 then MoE blocks of 4 experts of 32 (2
// chosen) and one shared expert, a vocabulary of 256.
Options small_deepseek(const char* framework, int64_t mtp_depth) {
  Options o;
  o.model = models::find_family("deepseek").name;
  o.framework = framework;
  o.dmodel = 64;
  o.dff = 128;
  o.head = 4;
  o.num_stacks = 3;
  o.dense_blocks = 1;
  stg_test::set_small_mla_moe(o);
  o.dvocal = 256;
  o.seq = 16;
  o.batch = o.micro_batch = 4;
  o.mtp_depth = mtp_depth;
  return o;
}

// One MoE block of the small DeepSeek at ep 1, by hand: MLA's five
// matrices, the router (the reference's is Dmodel x KExperts, Megatron-LM's
// Dmodel x Experts), 4 routed and 1 shared gated expert of 3 matrices.
int64_t moe_block(const std::string& framework) {
  const int64_t mla =
      64 * 32 + 32 * (16 + 8) * 4 + 64 * (16 + 8) + 16 * (16 + 16) * 4 + 16 * 4 * 64;
  const int64_t router = framework == "megatron" ? 64 * 4 : 64 * 2;
  return mla + router + (4 + 1) * 3 * 64 * 32;
}

TEST(Mtp, ModuleWeightsAsPublished) {
  for (const char* framework : {"reference", "megatron"}) {
    SCOPED_TRACE(framework);
    const models::Workload w = workloads::build_workload(small_deepseek(framework, 2));
    for (const std::string p : {"mtp.0.", "mtp.1."}) {
      // eh_proj: the joined normed pair (2 x 64) projected to 64.
      EXPECT_EQ(elements(w, p + "eh_proj"), 2 * 64 * 64);
      EXPECT_EQ(elements(w, p + "joined"), 4 * 16 * 2 * 64);
      EXPECT_EQ(elements(w, p + "projected"), 4 * 16 * 64);
      // The block is the model's last kind: MLA and experts.
      EXPECT_EQ(elements(w, p + "block.mha.wq_b"), 32 * (16 + 8) * 4);
      EXPECT_EQ(elements(w, p + "block.moe.wrouter"), elements(w, "transformer.2.moe.wrouter"));
      EXPECT_EQ(elements(w, p + "block.moe.shared.wup"), 64 * 32);
      EXPECT_NE(find(w, p + "final_norm.y"), nullptr);
    }
    EXPECT_EQ(find(w, "mtp.2.eh_proj"), nullptr);
    // Nothing of it without --mtp_depth, or with 0.
    EXPECT_EQ(find(workloads::build_workload(small_deepseek(framework, 0)), "mtp.0.eh_proj"),
              nullptr);
  }
}

TEST(Mtp, ProjectionSplitByColumnsOverTp) {
  for (const char* framework : {"reference", "megatron"}) {
    SCOPED_TRACE(framework);
    Options o = small_deepseek(framework, 1);
    o.degree["tp"] = 2;
    const models::Workload w = workloads::build_workload(o);
    // Each tp rank holds 32 of eh_proj's 64 output columns and projects the
    // whole gathered sequence (4 x 16 tokens of 128) onto them: 4 x 16 x
    // 128 x 32 multiply-accumulates.
    EXPECT_EQ(elements(w, "mtp.0.eh_proj"), 2 * 64 * 32);
    EXPECT_EQ(elements(w, "mtp.0.joined_full"), 4 * 16 * 2 * 64);
    EXPECT_EQ(elements(w, "mtp.0.projected_columns"), 4 * 16 * 32);
    EXPECT_EQ(elements(w, "mtp.0.projected"), 4 * 8 * 64);  // the rank's half of the sequence
    const int p = w.model.graph.at("mtp.0.projected_columns");
    EXPECT_EQ(expr::whole_count(w.model.graph.result(p).num_ops, w.values, "ops"),
              4 * 16 * 2 * 64 * 32);
  }
}

TEST(Mtp, SharesTheEmbeddingAndTheOutputLayerOnOneStage) {
  for (const char* framework : {"reference", "megatron"}) {
    SCOPED_TRACE(framework);
    const models::Workload with = workloads::build_workload(small_deepseek(framework, 2));
    const models::Workload without = workloads::build_workload(small_deepseek(framework, 0));
    // Each module adds eh_proj and one MoE block, no embedding or output
    // layer of its own: they read the model's, which sum the gradients.
    EXPECT_EQ(parameters(with) - parameters(without), 2 * (2 * 64 * 64 + moe_block(framework)));
    for (const std::string p : {"mtp.0.", "mtp.1."}) {
      for (const std::string part : {"emb.w", "head.w"}) {
        const graph::Tensor* t = find(with, p + part);
        ASSERT_NE(t, nullptr) << p + part;
        EXPECT_FALSE(t->require_grads) << p + part;
        EXPECT_EQ(t->op, graph::Op::kIdentity) << p + part;
        const std::string owner = part == "emb.w" ? "in_emb.w" : "out_emb.w";
        EXPECT_EQ(t->x1, with.model.graph.at(owner)) << p + part;
      }
    }
    // The input embedding's gradient is the sum of its three lookups'.
    int grads = 0;
    for (const graph::Tensor& t : with.model.graph.tensors())
      grads += t.grad_of == with.model.graph.at("in_emb.w");
    EXPECT_EQ(grads, 1);
    EXPECT_EQ(with.embedding_group, -1);
  }
}

TEST(Mtp, CopyOfTheEmbeddingOnTheLastStageWhenTheEndsAreApart) {
  for (const char* framework : {"reference", "megatron"}) {
    SCOPED_TRACE(framework);
    Options o = small_deepseek(framework, 2);
    o.degree["pp"] = 2;
    o.pipeline_schedule = lower::Schedule::named("1f1b");
    const models::Workload w = workloads::build_workload(o);
    // The first module's lookup holds the last stage's copy; both copies
    // are tied (their gradients summed over the embedding group); the
    // second module reads the first's copy.
    const graph::Tensor* copy = find(w, "mtp.0.emb.w");
    ASSERT_NE(copy, nullptr);
    EXPECT_TRUE(copy->require_grads);
    EXPECT_TRUE(copy->tied);
    EXPECT_TRUE(find(w, "in_emb.w")->tied);
    EXPECT_EQ(find(w, "mtp.1.emb.w")->x1, w.model.graph.at("mtp.0.emb.w"));
    EXPECT_GE(w.embedding_group, 0);
    // The copy counts once more on the last stage: 256 x 64.
    EXPECT_EQ(parameters(w) - parameters(workloads::build_workload(small_deepseek(framework, 2))),
              256 * 64);
    // Under DualPipeV the ends share stage 0: no copy, no group.
    o.pipeline_schedule = lower::Schedule::named("dualpipev");
    const models::Workload v = workloads::build_workload(o);
    EXPECT_FALSE(find(v, "mtp.0.emb.w")->require_grads);
    EXPECT_EQ(v.embedding_group, -1);
  }
  // Tied embeddings on stages apart: the modules read the last stage's copy
  // (the output layer's weight); no further copy.
  Options tied = small_deepseek("megatron", 1);
  tied.tie_embeddings = true;
  tied.degree["pp"] = 2;
  const models::Workload t = workloads::build_workload(tied);
  EXPECT_EQ(find(t, "mtp.0.emb.w")->x1, t.model.graph.at("out_emb.w"));
  EXPECT_EQ(find(t, "mtp.0.head.w")->x1, t.model.graph.at("out_emb.w"));
}

TEST(Mtp, ModulesGoToTheLastStage) {
  Options o = small_deepseek("megatron", 2);
  o.num_stacks = 6;
  o.degree["pp"] = 3;
  models::Workload w = workloads::build_workload(o);
  graph::Graph& g = w.model.graph;
  passes::assign_stages(g, 3, w.model.num_blocks);
  EXPECT_EQ(g[g.at("transformer.1.mha.wq_a")].stage, 0);
  EXPECT_EQ(g[g.at("transformer.5.mha.wq_a")].stage, 2);
  for (const char* name :
       {"mtp.0.eh_proj", "mtp.1.block.mha.wq_a", "mtp.1.head.loss", "mtp.0.emb.y"})
    EXPECT_EQ(g[g.at(name)].stage, 2) << name;
  // DualPipeV (six virtual stages of one block): the last part, and so the
  // modules, on stage 0's second chunk.
  passes::assign_stages(g, 3, w.model.num_blocks, 2, /*v_shape=*/true);
  EXPECT_EQ(g[g.at("mtp.1.block.mha.wq_a")].stage, 0);
  EXPECT_EQ(g[g.at("mtp.1.block.mha.wq_a")].chunk, 1);
}

TEST(Mtp, FullRecomputationCoversTheModules) {
  models::Workload w = workloads::build_workload(small_deepseek("megatron", 1));
  passes::add_recomputation(w.model.graph);
  const graph::Graph& g = w.model.graph;
  // The projection and the block's forward run again; the module's inputs
  // are its checkpoints.
  EXPECT_GE(g.find("recompute.mtp.0.projected"), 0);
  EXPECT_GE(g.find("recompute.mtp.0.block.mha.q_latent"), 0);
  EXPECT_LT(g.find("recompute.mtp.0.hnorm.x"), 0);
  EXPECT_LT(g.find("recompute.mtp.0.enorm.x"), 0);
}

TEST(Mtp, MegatronMemoryReportCountsTheModule) {
  // gpt under megatron, tp 1, one stage, no recomputation: Korthikanti's
  // 34·sbh bytes per block; a module adds its block, its two inputs and
  // the joined pair (2 + 2 + 4)·sbh, and one more output layer: the inputs
  // of its final norm and of the layer (4·sbh) and fp32 logits (4·sbV).
  Options o;
  o.model = "gpt";
  o.framework = "megatron";
  o.num_stacks = 2;
  o.dmodel = 64;
  o.dff = 256;
  o.head = 4;
  o.seq = 32;
  o.batch = o.micro_batch = 2;
  o.dvocal = 256;
  o.print_gpu_vram = true;
  stg_test::TempDir dir;
  o.output_dir = dir.path().string();
  const double without = generate(o).memory.at(0).activations;
  o.mtp_depth = 1;
  const double with = generate(o).memory.at(0).activations;
  const double sbh = 32.0 * 2 * 64, sbv = 32.0 * 2 * 256;
  EXPECT_DOUBLE_EQ(with - without, 34 * sbh + 8 * sbh + 4 * sbh + 4 * sbv);
}

TEST(Mtp, DeepSeekPresetAndConfigHaveOneModule) {
  Options preset;
  models::apply_preset(*models::find_preset("deepseek-v3"), preset);
  EXPECT_EQ(preset.mtp_depth, 1);
  stg_test::TempDir dir;
  const std::string base = R"({"architectures": ["DeepseekV3ForCausalLM"], "hidden_size": 64,
      "intermediate_size": 96, "num_attention_heads": 4, "num_hidden_layers": 2,
      "vocab_size": 256, "n_routed_experts": 4, "num_experts_per_tok": 2,
      "moe_intermediate_size": 32, "q_lora_rank": 32, "kv_lora_rank": 16,
      "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 16)";
  auto depth = [&](const std::string& extra) {
    Options o;
    const auto notes = models::apply_hf_config(dir.write("c.json", base + extra + "}"), o);
    EXPECT_TRUE(notes.empty());
    return o.mtp_depth;
  };
  EXPECT_EQ(depth(R"(, "num_nextn_predict_layers": 2)"), 2);
  EXPECT_EQ(depth(R"(, "num_nextn_predict_layers": 0)"), 0);
  EXPECT_EQ(depth(""), std::nullopt);
  try {
    depth(R"(, "num_nextn_predict_layers": -1)");
    ADD_FAILURE() << "num_nextn_predict_layers -1 accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'num_nextn_predict_layers'"), std::string::npos)
        << e.what();
  }
}

TEST(Mtp, RefusedWhereItDoesNotApply) {
  Options seed;
  seed.mtp_depth = 1;
  try {
    workloads::build_workload(seed);
    ADD_FAILURE() << "--mtp_depth accepted by the transformer";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--mtp_depth"), std::string::npos) << e.what();
  }
  Options negative = small_deepseek("reference", -1);
  try {
    workloads::build_workload(negative);
    ADD_FAILURE() << "--mtp_depth -1 accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--mtp_depth -1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace stg
