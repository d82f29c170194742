// Models as blocks (models/decoder.h): a decoder whose blocks are not alike
// (2 dense + 2 MoE), built through the library from a family of the test's
// own, has each block kind's distinctive ops in its blocks only, and is
// lowered, written and replayed validly.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stg/emit/trace_writer.h"
#include "stg/frameworks/registry.h"
#include "stg/generate.h"
#include "stg/mesh/rank_layout.h"
#include "stg/models/blocks/block_kinds.h"
#include "stg/models/decoder.h"
#include "stg/models/families/family.h"
#include "stg/models/mlps/mlp_row.h"
#include "stg/models/parts/attention.h"
#include "stg/tools/validate.h"
#include "stg/workloads/training_step.h"
#include "support/stage_schedule.h"
#include "support/temp_dir.h"

namespace stg {
namespace {

using models::BlockKind;
using models::BlockSpec;

// A block with grouped-query attention.
BlockSpec gqa_block(const models::MlpRow& mlp, std::vector<int64_t> mlp_options) {
  BlockSpec b;
  b.mlp = &mlp;
  b.mlp_options = std::move(mlp_options);
  b.mixer_options = models::AttentionOptions{.grouped = true}.list();
  return b;
}

const BlockSpec kDense = gqa_block(models::dense_mlp_row(), {1});  // gated
const BlockSpec kMoe = gqa_block(models::experts_row(), {});

// Two dense blocks, then two MoE blocks (as DeepSeek-V3 starts dense).
models::DecoderSpec two_dense_two_moe(const Options&, int) {
  models::DecoderSpec d;
  d.blocks = {kDense, kDense, kMoe, kMoe};
  return d;
}

Options small() {
  Options o;
  o.dmodel = 64;
  o.dff = 128;
  o.head = 4;
  o.component_flags["--kvhead"] = 2;
  o.seq = 16;
  o.batch = 4;
  o.micro_batch = 2;
  o.dvocal = 256;
  o.num_stacks = 4;
  o.component_flags["--experts"] = 4;
  o.component_flags["--kexperts"] = 2;
  o.degree["tp"] = 2;
  o.degree["ep"] = 2;
  o.degree["pp"] = 2;
  return o;
}

models::Workload mixed_workload(const Options& o) {
  models::Family mixed = models::moe_family();
  mixed.name = "mixed";
  mixed.decoder = two_dense_two_moe;
  const frameworks::Framework& f = frameworks::find("reference");
  models::Workload w = models::decoder_workload(o, f, mixed);
  w.framework = &f;
  w.kind = &workloads::training_step();
  return w;
}

// Tensors whose names start with `prefix`.
int count_prefixed(const graph::Graph& g, const std::string& prefix) {
  int n = 0;
  for (const graph::Tensor& t : g.tensors()) n += t.name.rfind(prefix, 0) == 0;
  return n;
}

TEST(Blocks, TwoDenseThenTwoMoe) {
  const models::Workload w = mixed_workload(small());
  const graph::Graph& g = w.model.graph;
  EXPECT_EQ(w.model.num_blocks, 4);
  for (int i = 0; i < 4; ++i) {
    const std::string p = "transformer." + std::to_string(i) + ".";
    const bool dense = i < 2;
    SCOPED_TRACE(p);
    // Attention in every block; a gated MLP in the dense ones, a router and
    // Experts/ep = 2 experts in the MoE ones.
    EXPECT_GE(g.find(p + "mha.wqkv"), 0);
    EXPECT_EQ(g.find(p + "ffn.wgate") >= 0, dense);
    EXPECT_EQ(g.find(p + "ffn.wup") >= 0, dense);
    EXPECT_EQ(g.find(p + "moe.wrouter") >= 0, !dense);
    EXPECT_EQ(g.find(p + "moe.1.ffn.wgate") >= 0, !dense);
    EXPECT_LT(g.find(p + "moe.2.ffn.wgate"), 0);
  }
  // Blocks of one kind are alike: the same tensors.
  EXPECT_EQ(count_prefixed(g, "transformer.0."), count_prefixed(g, "transformer.1."));
  EXPECT_EQ(count_prefixed(g, "transformer.2."), count_prefixed(g, "transformer.3."));
  EXPECT_GT(count_prefixed(g, "transformer.2."), count_prefixed(g, "transformer.0."));
  // A block with experts brings the ep axis.
  EXPECT_GE(w.mesh.find(mesh::AxisKind::kExpert), 0);
}

TEST(Blocks, MixedDecoderLowersAndReplays) {
  const Options o = small();
  models::Workload w = mixed_workload(o);
  const lower::LowerOptions lo = lower_options(o, w);
  graph::Graph g = std::move(w.model.graph);
  passes::Analyses analyses(w.mesh, w.values);
  build_pipeline(o, w, /*flat=*/false).run(g, analyses);
  std::vector<StageGraph> stages = lower_stages(g, w, lo, 1);
  ASSERT_EQ(stages.size(), 2u);
  // Dispatch and combine (ALL_TO_ALL over ep) only on the stage of the MoE
  // blocks (pp 2: blocks 0-1 on stage 0, blocks 2-3 on stage 1).
  int all_to_all[2] = {0, 0};
  for (const StageGraph& s : stages)
    for (const LoweredNode& n : s.nodes)
      all_to_all[s.stage] += n.kind == NodeKind::kColl && n.coll == graph::CollType::kAllToAll;
  EXPECT_EQ(all_to_all[0], 0);
  EXPECT_GT(all_to_all[1], 0);

  for (StageGraph& stage : stages)
    stg_test::schedule_and_order(stage, lo, static_cast<int>(w.mesh.stages()));
  const mesh::RankLayout layout(w.mesh);
  stg_test::TempDir dir;
  dir.write("workload.json", layout.comm_group_json());
  for (int64_t rank = 0; rank < layout.num_ranks(); ++rank) {
    std::string content;
    emit::append_trace(content, stages[layout.coords_of(rank).stage], layout.binding(rank),
                       o.schema, o.trace_detail);
    dir.write("workload." + std::to_string(rank) + ".et", content);
  }
  tools::ValidateOptions v;
  v.replay = true;
  const tools::ValidationReport report = tools::validate_dir(dir.path().string(), v);
  EXPECT_EQ(report.ranks, 8);
  EXPECT_TRUE(report.errors.empty());
  EXPECT_EQ(report.violations(), 0) << report.verdict();
  ASSERT_TRUE(report.replay.has_value());
  EXPECT_TRUE(report.replay->completed);
}

// A block of its mixer alone (mlp null; Nemotron-H's Mamba blocks) between
// blocks with MLPs: no post-mixer norm, MLP or experts in it, its residual
// the block's output, and the decoder still lowers and replays.
models::DecoderSpec with_a_mixer_only_block(const Options&, int) {
  BlockSpec mixer_only = kDense;
  mixer_only.mlp = nullptr;
  models::DecoderSpec d;
  d.blocks = {kDense, mixer_only, kDense, kMoe};
  return d;
}

TEST(Blocks, ABlockWithoutAnMlp) {
  Options o = small();
  models::Family mixed = models::moe_family();
  mixed.name = "mixed";
  mixed.decoder = with_a_mixer_only_block;
  const frameworks::Framework& f = frameworks::find("megatron");
  models::Workload w = models::decoder_workload(o, f, mixed);
  const graph::Graph& g = w.model.graph;
  const std::string p = "transformer.1.";
  EXPECT_GE(g.find(p + "mha.wqkv"), 0);
  EXPECT_GE(g.find(p + "ffn_res.y"), 0);
  EXPECT_LT(g.find(p + "post_attn_norm.y"), 0);
  EXPECT_LT(g.find(p + "ffn.wup"), 0);
  EXPECT_LT(g.find(p + "mha_res.y"), 0);
  // Its activations: the frame's and the mixer's terms, no MLP's.
  EXPECT_EQ(models::block_activations(w.decoder.blocks[1], false).terms.size(), 2u);
  EXPECT_EQ(models::block_activations(w.decoder.blocks[0], false).terms.size(), 3u);
  w.framework = &f;
  w.kind = &workloads::training_step();
  const lower::LowerOptions lo = lower_options(o, w);
  graph::Graph lowered = std::move(w.model.graph);
  passes::Analyses analyses(w.mesh, w.values);
  build_pipeline(o, w, /*flat=*/false).run(lowered, analyses);
  EXPECT_EQ(lower_stages(lowered, w, lo, 1).size(), 2u);
}

}  // namespace
}  // namespace stg
