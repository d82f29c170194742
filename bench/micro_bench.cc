// Google Benchmark timings of the hot parts: expression evaluation, stage
// lowering and per-rank serialisation. Built with -DSTG_BUILD_BENCH=ON.
#include <benchmark/benchmark.h>

#include "stg/emit/flat_writer.h"
#include "stg/emit/stage_template.h"
#include "stg/expr/expr.h"
#include "stg/generate.h"
#include "stg/mesh/rank_layout.h"
#include "stg/workloads/build_workload.h"

namespace {

using stg::expr::Expr;

void BM_ExprParse(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(Expr::parse("2*Dff*Dmodel/tp + 4*Dmodel**2/tp"));
}
BENCHMARK(BM_ExprParse);

void BM_ExprEvaluate(benchmark::State& state) {
  const Expr e = Expr::parse("2*Dff*Dmodel/tp + 4*Dmodel**2/tp");
  const std::map<std::string, int64_t> values = {{"Dff", 28672}, {"Dmodel", 8192}, {"tp", 4}};
  for (auto _ : state) benchmark::DoNotOptimize(e.evaluate(values));
}
BENCHMARK(BM_ExprEvaluate);

// A gpt of `layers` blocks at dp2 tp2 pp2 through the pass pipeline,
// ready to lower.
struct Fixture {
  stg::models::Workload workload;
  stg::graph::Graph graph;
  std::vector<int> stage0;
  stg::lower::LowerOptions options;
  explicit Fixture(int layers) {
    stg::Options o;
    o.model = "gpt";
    o.num_stacks = layers;
    o.degree["dp"] = o.degree["tp"] = o.degree["pp"] = 2;
    o.dmodel = 8192;
    o.dff = 28672;
    o.head = 64;
    workload = stg::workloads::build_workload(o);
    graph = std::move(workload.model.graph);
    stg::passes::Analyses analyses(workload.mesh, workload.values);
    stg::build_pipeline(o, workload).run(graph, analyses);
    options = stg::lower_options(o, workload);
    for (size_t i = 0; i < graph.size(); ++i)
      if (graph[static_cast<int>(i)].stage == 0) stage0.push_back(static_cast<int>(i));
    graph.evaluate_all();
  }
  stg::StageGraph lower() const {
    return stg::lower::lower_stage(graph, stage0, 0, workload.values, options);
  }
};

void BM_LowerStage(benchmark::State& state) {
  Fixture f(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(f.lower());
}
BENCHMARK(BM_LowerStage)->Arg(8)->Arg(80)->Unit(benchmark::kMillisecond);

void BM_SerializeRank(benchmark::State& state) {
  Fixture f(80);
  const stg::StageGraph stage = f.lower();
  const stg::emit::StageTemplate tmpl = stg::emit::stage_template(stage);
  const stg::mesh::RankLayout layout(f.workload.mesh);
  const stg::mesh::RankBinding binding = layout.binding(1);
  std::string out;
  for (auto _ : state) {
    out.clear();
    tmpl.append_rank(out, binding);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * out.size()));
}
BENCHMARK(BM_SerializeRank)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
