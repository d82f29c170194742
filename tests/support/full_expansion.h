// The test oracle of the one lowering path: a run built the slow way, as
// the reference builds it (every micro-batch replicated in the graph, every
// micro-batch lowered, the schedule and node order applied by the tests' own
// code, support/stage_schedule.h) and written with the libprotobuf writers
// (emit/trace_writer.h). generate() lowers one micro-batch per stage and
// derives the rest (lower/flat_stage.h); its files must equal these. A
// serving run (stg infer) is built with every decode step in the graph, each
// of its own context length, where generate() writes them from one.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "stage_schedule.h"
#include "stg/emit/trace_writer.h"
#include "stg/frameworks/framework.h"
#include "stg/generate.h"
#include "stg/io/output_files.h"
#include "stg/io/output_names.h"
#include "stg/mesh/rank_layout.h"
#include "stg/report/stage_figures.h"
#include "stg/workloads/build_workload.h"
#include "stg/workloads/workload_kind.h"

namespace stg_test {

struct FullExpansion {
  std::map<std::string, std::string> files;  // file name -> bytes
  stg::report::StepFigures step;             // of every rank
};

inline FullExpansion full_expansion(const stg::Options& o) {
  using namespace stg;
  models::Workload w = workloads::build_workload(o);
  if (o.serving) {
    const frameworks::Framework& f = *w.framework;
    w = models::inference_workload(o, f, /*steps_from_one=*/false);
    w.framework = &f;
    workloads::choose_kind(w);
  }
  const lower::LowerOptions lo = lower_options(o, w);
  const std::vector<lower::Step> phases = w.kind->schedule(lo).phases;
  graph::Graph g = std::move(w.model.graph);
  passes::Analyses analyses(w.mesh, w.values);
  build_pipeline(o, w, /*flat=*/false).run(g, analyses);
  std::vector<StageGraph> stages = lower_stages(g, w, lo, 1);
  for (StageGraph& stage : stages)
    schedule_and_order(stage, lo, static_cast<int>(w.mesh.stages()), phases);
  const mesh::RankLayout layout(w.mesh);
  const OutputPlan out = resolve_outputs(o);
  FullExpansion result;
  result.files[out.comm_group_name] = layout.comm_group_json();
  for (int64_t rank = 0; rank < layout.num_ranks(); ++rank) {
    std::string content;
    emit::append_trace(content, stages[layout.coords_of(rank).stage], layout.binding(rank),
                       o.schema, o.trace_detail);
    result.files[io::expand_rank(out.rank_pattern, rank)] = std::move(content);
  }
  result.step =
      report::step_figures(stages, w.mesh, 0, layout.num_ranks() - 1,
                           lo.kernel_flops ? "FLOPs and bytes: --units physical"
                                           : "--units stg: num_ops in multiply-accumulates or "
                                             "element operations, sizes in elements");
  return result;
}

}  // namespace stg_test
