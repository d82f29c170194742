// Workloads beyond a training step (workloads/): a forward-only workload
// built from its own graph (phases prefill, decode 0, decode 1; a KV cache as
// persistent state read by every phase), lowered through the one lowering
// path: no gradients, no updates, and the stage runs the phases in order.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "stg/emit/flat_writer.h"
#include "stg/emit/trace_writer.h"
#include "stg/frameworks/registry.h"
#include "stg/generate.h"
#include "stg/lower/expand_stage.h"
#include "stg/lower/flat_stage.h"
#include "stg/lower/step_growth.h"
#include "stg/mesh/rank_layout.h"
#include "stg/models/workload.h"
#include "stg/workloads/forward_only.h"
#include "stg/workloads/training_step.h"

namespace stg {
namespace {

using graph::Phase;

// x -> q = x.w -> s = q.kv^T -> o = s.kv, once per phase; each phase reads
// the previous one's o and the cache kv.
models::Workload serving_workload(const workloads::WorkloadKind& kind) {
  models::Workload w;
  graph::Graph& g = w.model.graph;
  g.weight("w", "D, D");
  g.mutable_tensor(g.at("w")).require_grads = false;  // served, not trained
  g.input("kv", "Ctx, D");
  g.mutable_tensor(g.at("kv")).role = graph::Role::kPersistent;
  g.input("x", "Batch/dp, D");
  const std::vector<std::pair<Phase, int>> phases = {
      {Phase::kPrefill, 0}, {Phase::kDecode, 0}, {Phase::kDecode, 1}};
  std::string in = "x";
  for (size_t p = 0; p < phases.size(); ++p) {
    const std::string k = std::to_string(p);
    const int first = static_cast<int>(g.size());
    g.einsum("q" + k, in, "w", "bd,de->be", "Batch/dp, D", "D, D");
    g.einsum("s" + k, "q" + k, "kv", "bd,cd->bc", "Batch/dp, D", "Ctx, D");
    g.einsum("o" + k, "s" + k, "kv", "bc,cd->bd", "Batch/dp, Ctx", "Ctx, D");
    for (size_t i = first; i < g.size(); ++i) {
      g.mutable_tensor(static_cast<int>(i)).phase = phases[p].first;
      g.mutable_tensor(static_cast<int>(i)).phase_step = phases[p].second;
    }
    in = "o" + k;
  }
  w.model.axes = {{"dp", "dp", mesh::AxisKind::kData}};
  w.model.degree_symbols = {"dp"};
  w.mesh = mesh::Mesh({{"dp", "dp", 2, mesh::AxisKind::kData, "--dp"}}, 1);
  w.values.by_symbol = {{"Batch", 8}, {"MicroBatch", 4}, {"D", 16}, {"Ctx", 32}, {"dp", 2}};
  w.micro_batch_renames = {{"Batch", expr::Expr::symbol("MicroBatch")}};
  w.micro_batches = 2;
  w.framework = &frameworks::find("reference");
  w.kind = &kind;
  return w;
}

TEST(ForwardOnlyWorkload, PersistentCacheReadByEveryPhaseInPhaseOrder) {
  const workloads::ForwardOnly serving(
      {{Phase::kPrefill, 0, 0, 0}, {Phase::kDecode, 0, 0, 0}, {Phase::kDecode, 1, 0, 0}});
  models::Workload w = serving_workload(serving);
  const Options o;
  const passes::PassManager pipeline = build_pipeline(o, w, /*flat=*/true);
  EXPECT_EQ(pipeline.names(), (std::vector<std::string>{"replicate-micro-batches", "assign-stages",
                                                        "insert-send-recv", "insert-collectives"}));
  graph::Graph g = std::move(w.model.graph);
  passes::Analyses analyses(w.mesh, w.values);
  pipeline.run(g, analyses);
  for (const graph::Tensor& t : g.tensors()) {
    EXPECT_FALSE(t.is_backward()) << t.id();
    EXPECT_NE(t.role, graph::Role::kUpdate) << t.id();
    EXPECT_NE(t.role, graph::Role::kGradient) << t.id();
  }

  lower::LowerOptions lo = lower_options(o, w);
  lower::LowerOptions one = lo;
  one.micro_batches = 1;
  const std::vector<StageGraph> stages = lower_stages(g, w, one, 1);
  const StageGraph all = lower::expand(
      lower::FlatStage(stages[0], lower::recv_tags(g, 1), w.micro_batches, serving.schedule(lo)));
  // 3 phases x 3 einsums x 2 micro-batches; the placeholders do no work.
  ASSERT_EQ(all.nodes.size(), 18u);
  auto node = [&](const std::string& name) -> const LoweredNode& {
    for (const LoweredNode& n : all.nodes)
      if (n.name == name) return n;
    throw std::runtime_error("no node " + name);
  };
  // The cache is an input of both phases' attention.
  std::set<std::string> readers;
  for (const LoweredNode& n : all.nodes)
    for (const TensorInfoRef& in : n.inputs)
      if (in->name.rfind("mb0.kv@0", 0) == 0) readers.insert(n.name);
  EXPECT_EQ(readers, (std::set<std::string>{"mb0.s0@0_COMP", "mb0.o0@0_COMP", "mb0.s1@0_COMP",
                                            "mb0.o1@0_COMP", "mb0.s2@0_COMP", "mb0.o2@0_COMP"}));
  // Steps: prefill mb0, prefill mb1, decode 0 mb0, decode 0 mb1, decode 1 ...
  EXPECT_EQ(node("mb1.q0@0_COMP").ctrl_deps, std::vector<uint64_t>{node("mb0.o0@0_COMP").id});
  EXPECT_EQ(node("mb0.q1@0_COMP").ctrl_deps, std::vector<uint64_t>{node("mb1.o0@0_COMP").id});
  EXPECT_EQ(node("mb1.q1@0_COMP").ctrl_deps, std::vector<uint64_t>{node("mb0.o1@0_COMP").id});
  EXPECT_EQ(node("mb0.q2@0_COMP").ctrl_deps, std::vector<uint64_t>{node("mb1.o1@0_COMP").id});
  EXPECT_TRUE(node("mb0.q0@0_COMP").ctrl_deps.empty());
  // Decode 0 of a micro-batch reads its own prefill's output.
  EXPECT_EQ(node("mb1.q1@0_COMP").data_deps, std::vector<uint64_t>{node("mb1.o0@0_COMP").id});
}

// The same graph under the training step gets its weight updated (the
// training step adds what the model's graph lacks); the forward-only one
// does not.
TEST(ForwardOnlyWorkload, TheTrainingStepIsAnotherWorkload) {
  models::Workload w = serving_workload(workloads::training_step());
  w.model.graph.mutable_tensor(w.model.graph.at("w")).require_grads = true;
  const passes::PassManager pipeline = build_pipeline(Options{}, w, /*flat=*/true);
  EXPECT_TRUE(pipeline.contains("add-weight-updates"));
}

// A serving graph of two blocks on two stages: a prefill of P tokens, then
// decode steps of one token. Each block has a KV cache (persistent, of
// P + D tokens) that a decode step's attention reads Ctx tokens of; the
// token sampled on the last stage is what the next step embeds on the first.
// `steps` decode steps: from one (`from_one`: names numbered at step_at,
// Ctx the first step's, the step's token succeeding the prefill's), or each
// built with its own context length.
constexpr int kPrompt = 8, kBlocks = 2;
models::Workload decode_workload(const workloads::WorkloadKind& kind, int steps, bool from_one) {
  using Kind = graph::Placement::Kind;
  models::Workload w;
  graph::Graph& g = w.model.graph;
  auto place = [&](int i, Kind kind, int block = 0) {
    g.mutable_tensor_keep_result(i).placement = {kind, block};
  };
  place(g.weight("emb.w", "D, D"), Kind::kFirst);
  place(g.weight("out.w", "D, V"), Kind::kLast);
  for (int b = 0; b < kBlocks; ++b) {
    const std::string k = std::to_string(b);
    place(g.weight("w" + k, "D, D"), Kind::kBlock, b);
    const int kv = g.input("kv" + k, "Batch/dp, Cache, D");
    g.mutable_tensor(kv).role = graph::Role::kPersistent;
    place(kv, Kind::kBlock, b);
  }
  // One phase; `ctx`: the decode step's context ("" for the prefill).
  auto phase = [&](const std::string& p, graph::Phase ph, int step, const std::string& ctx,
                   int previous_token) {
    const int first = static_cast<int>(g.size());
    const std::string s = ctx.empty() ? "P" : "1";
    const std::string act = "Batch/dp, " + s + ", D";
    place(g.input(p + "x", act), Kind::kFirst);
    const int emb = g.einsum(p + "emb", p + "x", "emb.w", "bsd,de->bse", act, "D, D");
    place(emb, Kind::kFirst);
    if (previous_token >= 0) g.mutable_tensor(emb).extra_deps = {previous_token};
    std::string h = p + "emb";
    for (int b = 0; b < kBlocks; ++b) {
      const std::string k = std::to_string(b);
      const int begin = static_cast<int>(g.size());
      if (ctx.empty()) {
        g.einsum(p + "a" + k, h, "w" + k, "bsd,de->bse", act, "D, D");
      } else {
        // Attention over the cache: 4 operations per cached element.
        const int a = g.custom(p + "a" + k, "kv" + k, "4*Batch/dp*" + ctx + "*D",
                               "Batch/dp, " + ctx + ", D", act);
        g.mutable_tensor(a).extra_deps = {g.at(h)};
      }
      g.add_op(p + "h" + k, p + "a" + k, h, act);
      for (int i = begin; i < static_cast<int>(g.size()); ++i) place(i, Kind::kBlock, b);
      h = p + "h" + k;
    }
    place(g.einsum(p + "logits", h, "out.w", "bsd,dv->bsv", act, "D, V"), Kind::kLast);
    const int token = g.custom(p + "token", p + "logits", "Batch/dp*V", "Batch/dp, " + s + ", V",
                               "Batch/dp, 1, 1");
    place(token, Kind::kLast);
    for (int i = first; i < static_cast<int>(g.size()); ++i) {
      graph::Tensor& t = g.mutable_tensor_keep_result(i);
      t.phase = ph;
      t.phase_step = step;
      if (from_one && ph == graph::Phase::kDecode) t.step_at = 6;  // "decode0."
    }
    return token;
  };
  const int prefill = phase("prefill.", graph::Phase::kPrefill, 0, "", -1);
  if (from_one) {
    const int token = phase("decode0.", graph::Phase::kDecode, 0, "Ctx", prefill);
    g.mutable_tensor_keep_result(token).succeeds = prefill;
  } else {
    int previous = prefill;
    for (int step = 0; step < steps; ++step)
      previous = phase("decode" + std::to_string(step) + ".", graph::Phase::kDecode, step,
                       std::to_string(kPrompt + 1 + step), previous);
  }
  w.model.axes = {{"dp", "dp", mesh::AxisKind::kData}};
  w.model.degree_symbols = {"dp"};
  w.model.num_blocks = kBlocks;
  w.mesh = mesh::Mesh({{"dp", "dp", 2, mesh::AxisKind::kData, "--dp"}}, 2);
  w.values.by_symbol = {
      {"Batch", 8},   {"MicroBatch", 4},          {"D", 16},           {"V", 32}, {"dp", 2},
      {"P", kPrompt}, {"Cache", kPrompt + steps}, {"Ctx", kPrompt + 1}};
  w.micro_batch_renames = {{"Batch", expr::Expr::symbol("MicroBatch")}};
  w.micro_batches = 2;
  w.framework = &frameworks::find("reference");
  w.kind = &kind;
  return w;
}

// Each rank's file of a decode workload, written from its flat stages.
std::vector<std::string> decode_files(const workloads::ForwardOnly& kind, int steps, bool from_one,
                                      bool expanded) {
  models::Workload w = decode_workload(kind, steps, from_one);
  const Options o;
  graph::Graph g = std::move(w.model.graph);
  passes::Analyses analyses(w.mesh, w.values);
  build_pipeline(o, w, /*flat=*/true).run(g, analyses);
  const lower::LowerOptions lo = lower_options(o, w);
  lower::LowerOptions one = lo;
  one.micro_batches = 1;
  std::vector<StageGraph> stages = lower_stages(g, w, one, 1);
  if (from_one) {
    expr::Values next = w.values, last = w.values;
    next.by_symbol["Ctx"] += 1;
    last.by_symbol["Ctx"] += steps - 1;
    const std::vector<StageGraph> at_next = lower_stages(g, w, next, one, 1, 0, -1);
    const std::vector<StageGraph> at_last = lower_stages(g, w, last, one, 1, 0, -1);
    for (size_t s = 0; s < stages.size(); ++s)
      lower::add_step_growth(stages[s], at_next[s], &at_last[s], steps);
  }
  const mesh::RankLayout layout(w.mesh);
  std::vector<std::string> files;
  for (int64_t rank = 0; rank < layout.num_ranks(); ++rank) {
    const int s = static_cast<int>(layout.coords_of(rank).stage);
    const lower::FlatStage flat(stages[s], lower::recv_tags(g, 2), w.micro_batches,
                                kind.schedule(lo), lo.order);
    std::string file;
    if (expanded)
      emit::append_trace(file, lower::expand(flat), layout.binding(rank), emit::Schema::kV004);
    else
      emit::FlatStageWriter(flat, emit::TraceDetail::kFull)
          .write_rank(layout.binding(rank), [&](std::string_view piece) { file += piece; });
    files.push_back(std::move(file));
  }
  return files;
}

std::vector<lower::Step> every_step(int steps) {
  std::vector<lower::Step> phases = {{Phase::kPrefill, 0, 0, 0}};
  for (int step = 0; step < steps; ++step) phases.push_back({Phase::kDecode, step, 0, 0});
  return phases;
}

// D decode steps written from one equal the D steps built one by one, byte
// for byte: ids, numbered names, sizes growing with the context, the
// token's SEND/RECV per step with its tags, the phase order's ctrl_deps.
TEST(ForwardOnlyWorkload, DecodeStepsFromOneEqualEveryStepBuilt) {
  for (int steps : {1, 2, 5}) {
    const workloads::ForwardOnly from_one({{Phase::kPrefill, 0, 0, 0}, {Phase::kDecode, 0, 0, 0}},
                                          steps, "Ctx");
    const workloads::ForwardOnly built(every_step(steps));
    const std::vector<std::string> expected = decode_files(built, steps, false, true);
    EXPECT_EQ(decode_files(from_one, steps, true, true), expected) << steps << " steps, expanded";
    EXPECT_EQ(decode_files(from_one, steps, true, false), expected) << steps << " steps, flat";
  }
}

// What the derivation stands on: the step's attention grows by the cache
// elements of one token per step, in FLOPs and in the cache bytes read; the
// second step reads the first step's token, not the prefill's.
TEST(ForwardOnlyWorkload, DecodeStepsGrowWithTheContext) {
  const int steps = 3;
  const workloads::ForwardOnly from_one({{Phase::kPrefill, 0, 0, 0}, {Phase::kDecode, 0, 0, 0}},
                                        steps, "Ctx");
  models::Workload w = decode_workload(from_one, steps, true);
  graph::Graph g = std::move(w.model.graph);
  passes::Analyses analyses(w.mesh, w.values);
  build_pipeline(Options{}, w, /*flat=*/true).run(g, analyses);
  lower::LowerOptions lo = lower_options(Options{}, w);
  EXPECT_TRUE(lo.tensor_size_moved);
  EXPECT_EQ(lo.flops_per_mac, 2);  // serving counts FLOPs and bytes
  lo.micro_batches = 1;
  std::vector<StageGraph> stages = lower_stages(g, w, lo, 1);
  expr::Values next = w.values;
  next.by_symbol["Ctx"] += 1;
  const std::vector<StageGraph> at_next = lower_stages(g, w, next, lo, 1, 0, -1);
  lower::add_step_growth(stages[1], at_next[1], nullptr, steps);
  const lower::FlatStage flat(stages[1], lower::recv_tags(g, 2), 2, from_one.schedule(lo));
  // Per micro-batch of 4 requests / dp 2: one token of a 16-wide cache, in
  // bf16 bytes; 4 operations per element.
  const int64_t elements = 2 * 16;
  for (const LoweredNode& n : flat.one().nodes) {
    if (n.name.find("decode0.a1@0_COMP") == std::string::npos) continue;
    EXPECT_EQ(n.growth.num_ops, 4 * elements);
    EXPECT_EQ(n.growth.state_bytes_read, 2 * elements);
    EXPECT_EQ(n.growth.tensor_size, 2 * elements);
    EXPECT_EQ(n.state_bytes_read, static_cast<uint64_t>(2 * elements * (kPrompt + 1)));
  }
  const StageGraph all = lower::expand(flat);
  auto node = [&](const std::string& name) -> const LoweredNode& {
    for (const LoweredNode& n : all.nodes)
      if (n.name == name) return n;
    throw std::runtime_error("no node " + name);
  };
  EXPECT_EQ(node("mb1.decode2.a1@0_COMP").num_ops, 4 * elements * (kPrompt + 3));
  // The token the second step sends is the first step's.
  const LoweredNode& send = node("mb1.decode1.emb@0_IN3_Y_SEND");
  EXPECT_EQ(send.data_deps, std::vector<uint64_t>{node("mb1.decode0.token@0_COMP").id});
  EXPECT_EQ(node("mb1.decode0.emb@0_IN3_Y_SEND").data_deps,
            std::vector<uint64_t>{node("mb1.prefill.token@0_COMP").id});
}

}  // namespace
}  // namespace stg
