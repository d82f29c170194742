// The figures of a lowered run: its memory report, the step's figures per
// rank, `stg infer`'s serving figures, and the refusals made before
// anything is written.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stg/frameworks/framework.h"
#include "stg/generate.h"
#include "stg/generate/lowered_run.h"
#include "stg/mesh/rank_layout.h"

namespace stg {

// The --print_gpu_vram report (empty without it), with the K/V a cp
// attention kernel holds.
frameworks::MemoryReport memory_report(const Options& o, const models::Workload& w,
                                       const lower::LowerOptions& lo, const graph::Graph& g,
                                       int64_t ranks_per_stage);

// What one rank of each stage computes and sends (stages not lowered: none).
std::vector<report::RankStep> stage_steps(
    const std::vector<std::optional<lower::FlatStage>>& stages, const mesh::Mesh& mesh);

// The step's figures over the ranks in `ranges`.
report::StepFigures step_of_run(const std::vector<report::RankStep>& by_stage,
                                const mesh::Mesh& mesh, const std::vector<RankRange>& ranges,
                                bool physical);

// ASTRA-sim's roofline would run some node in 0 ns (emit/astra_sim_plan.h).
void add_zero_time_note(const LoweredRun& run, const Options& o, std::vector<std::string>& notes);

// What is refused before anything is written: a v0.0.1 message that its
// 32-bit comm_size cannot hold (emit/v001_limits.h), a serving plan whose
// memory does not fit the GPU. Returns the serving figures (`stg infer`).
std::optional<report::ServingFigures> check_before_writing(const Options& o,
                                                           const models::Workload& w,
                                                           const LoweredRun& run,
                                                           const mesh::RankLayout& layout);

// The figures of a lowered run: its notes, memory per stage (the text
// only with --print_gpu_vram), step figures, ranks and stages.
RunSummary run_figures(const Options& o, models::Workload& w, const lower::LowerOptions& lo,
                       const LoweredRun& run, const mesh::RankLayout& layout,
                       const std::vector<RankRange>& ranges);

}  // namespace stg
