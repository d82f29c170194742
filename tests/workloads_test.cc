// Workloads beyond a training step (workloads/): a forward-only workload
// built from its own graph (phases prefill, decode 0, decode 1; a KV cache as
// persistent state read by every phase), lowered through the one lowering
// path: no gradients, no updates, and the stage runs the phases in order.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "stg/frameworks/registry.h"
#include "stg/generate.h"
#include "stg/lower/expand_stage.h"
#include "stg/lower/flat_stage.h"
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
  const StageGraph all = lower::expand(lower::FlatStage(
      stages[0], lower::recv_tags(g, 1), w.micro_batches, serving.schedule(lo)));
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

}  // namespace
}  // namespace stg
