// Google Benchmark timings of the hot parts: expression evaluation, stage
// lowering and per-rank serialisation. Built with -DSTG_BUILD_BENCH=ON.
#include <benchmark/benchmark.h>

#include "stg/emit/stage_template.h"
#include "stg/expr/expr.h"
#include "stg/lower/lower_stage.h"
#include "stg/lower/rank_layout.h"
#include "stg/models/gpt.h"
#include "stg/passes/grad_update.h"
#include "stg/passes/micro_batch.h"
#include "stg/passes/pipeline.h"

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

// A gpt of `layers` blocks at dp2 tp2 pp2, ready to lower.
struct Fixture {
  stg::models::Model model;
  stg::passes::PipelinePlan plan;
  stg::lower::Values values;
  stg::lower::LowerOptions options;
  explicit Fixture(int layers) {
    model = stg::models::build_gpt({layers, true, false});
    model.graph = stg::passes::replicate_micro_batches(model.graph, 1);
    model.graph.substitute({{"fsdp", Expr::constant(1)}, {"gshard", Expr::constant(1)}});
    stg::passes::add_weight_updates(model.graph);
    plan = stg::passes::assign_stages(model.graph, 2, layers);
    values.by_symbol = {{"Dvocal", 32000},  {"Dmodel", 8192}, {"Dff", 28672}, {"Batch", 64},
                        {"MicroBatch", 64}, {"Seq", 1024},    {"Head", 64},   {"KVHead", 8},
                        {"dp", 2},          {"tp", 2},        {"cp", 1},      {"ep", 1}};
    options.active_axes = {{stg::Axis::kDp, "dp"}, {stg::Axis::kTp, "tp"}};
    options.claim_rule = stg::lower::ClaimRule::kEveryAxisInDim;
    model.graph.evaluate_all();
  }
};

void BM_LowerStage(benchmark::State& state) {
  Fixture f(static_cast<int>(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(
        stg::lower::lower_stage(f.model.graph, f.plan, 0, f.values, f.options));
}
BENCHMARK(BM_LowerStage)->Arg(8)->Arg(80)->Unit(benchmark::kMillisecond);

void BM_SerializeRank(benchmark::State& state) {
  Fixture f(80);
  const stg::StageGraph stage =
      stg::lower::lower_stage(f.model.graph, f.plan, 0, f.values, f.options);
  const stg::emit::StageTemplate tmpl(stage);
  const stg::lower::RankLayout layout(2, {2, 2, 1, 1},
                                      {stg::Axis::kDp, stg::Axis::kTp, stg::Axis::kSp});
  const stg::RankBinding binding = layout.binding(1);
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
