// The library's entry points: the whole run (generate) and its steps, in
// order, for callers that want one of them (a Python module, tests):
//   resolve_outputs -> workloads::build_workload -> build_pipeline + run ->
//   lower_stages -> lower::FlatStage per stage -> the trace writers (emit/).
// Nothing here prints: results and notes come back in RunSummary; progress
// goes to a listener the caller owns (the command line draws a bar).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stg/graph/graph.h"
#include "stg/lower/lower_stage.h"
#include "stg/models/workload.h"
#include "stg/options.h"
#include "stg/passes/pass.h"
#include "stg/report/memory.h"
#include "stg/report/serving.h"
#include "stg/report/step_figures.h"
#include "stg/util/progress.h"

namespace stg {

// Inclusive ranks [first, second].
using RankRange = std::pair<int64_t, int64_t>;

// How many ranks the ranges hold (an empty range, last < first, none).
inline int64_t ranks_in(const std::vector<RankRange>& ranges) {
  int64_t n = 0;
  for (const auto& [first, last] : ranges) n += std::max<int64_t>(0, last - first + 1);
  return n;
}

struct RunSummary {
  int64_t ranks = 0;                       // of the whole run
  int64_t stages = 1;                      // pipeline stages of the run
  int64_t first_rank = 0, last_rank = -1;  // the ranks written (a part: --ranks, --shard)
  std::vector<RankRange> rank_ranges;      // the same, as ranges (--ranks 0-7,64-71)
  int64_t files = 0;                       // files written, and their bytes
  int64_t bytes = 0;
  int64_t nodes = 0;
  // Rank files of an earlier, larger run in --output_dir that this run (of
  // every rank) removed as stale.
  int64_t stale_files_removed = 0;
  std::string comm_group_path;
  std::string memory_report;                // with --print_gpu_vram: one line per stage
  std::vector<report::StageMemory> memory;  // the same figures, per stage (bytes)
  // FLOPs per rank and bytes per parallel axis of the ranks written
  // (report/step_figures.h; the CLI prints them with --print_step_figures).
  report::StepFigures step;
  // One rank of each pipeline stage (index = stage): its FLOPs and traffic
  // by axis; and whether they count FLOPs and bytes (--units physical) or
  // the reference's multiply-accumulates and elements.
  std::vector<report::RankStep> stage_steps;
  bool physical_units = false;
  // `stg infer`: the per-phase figures and the memory per rank
  // (report/serving.h).
  std::optional<report::ServingFigures> serving;
  std::vector<std::string> notes;  // flags that had no effect, ...
};

// Where a run writes: trace files by rank pattern, the comm-group file, and
// the ranks asked for (--ranks; all when empty).
struct OutputPlan {
  std::string dir;
  std::string rank_pattern;  // "%d" = rank
  std::string comm_group_name;
  std::vector<std::string> subdirs;  // of `dir`, that the names need (created)
};
OutputPlan resolve_outputs(const Options& o);

// The ordered pass pipeline of a run (`stg --print_passes` prints it); the
// gradient passes and the collective creator are the workload's framework's.
// `flat`: with one micro-batch standing for all (lower/flat_stage.h), as
// the run lowers it; else with every micro-batch, as the reference builds
// the graph (--dump_after writes that graph; tests lower it as an oracle).
passes::PassManager build_pipeline(const Options& o, const models::Workload& w, bool flat = false);

// How one stage is lowered (units, schedule; the workload's framework
// gives the defaults, the node order and what tensor_size counts, and the
// workload kind may choose its own).
lower::LowerOptions lower_options(const Options& o, const models::Workload& w);
// The units of the run: the flag's, else the workload kind's, else the
// framework's.
Units units(const Options& o, const models::Workload& w);

// Lowers the stages first_stage..last_stage (-1: the last) of a graph that
// went through the pipeline; the others stay empty.
std::vector<StageGraph> lower_stages(const graph::Graph& g, const models::Workload& w,
                                     const lower::LowerOptions& options, int threads,
                                     int first_stage = 0, int last_stage = -1);
// The same with other numbers bound to the symbols (a decode-step template
// at another context length).
std::vector<StageGraph> lower_stages(const graph::Graph& g, const models::Workload& w,
                                     const expr::Values& values, const lower::LowerOptions& options,
                                     int threads, int first_stage, int last_stage);

// Checks the options and generates everything. Throws UsageError on bad
// input before any file is written. Files are staged inside the output
// directory and moved into place only when all are complete: a write error
// (io::OutputError) or a stop request (io/cancel.h; the command line sets it
// on SIGINT, SIGTERM, SIGHUP) leaves the directory as it was.
RunSummary generate(const Options& options, ProgressListener* progress = nullptr);

// The figures of a run without its files (the Python module's stg.plan):
// the options checked as generate() checks them, every stage lowered, and
// what the run would report, the memory per rank of every stage whether or
// not --print_gpu_vram asks for it.
struct PlanSummary {
  int64_t ranks = 0;
  int64_t ranks_per_stage = 0;
  int micro_batches = 1;
  std::vector<int64_t> nodes_per_stage;  // nodes in the file of each rank of a stage
  int64_t nodes = 0;                     // in all ranks' files
  std::string memory_report;
  std::vector<report::StageMemory> memory;
  report::StepFigures step;
  // One rank of each pipeline stage (index = stage): its FLOPs and traffic
  // by axis; and whether they count FLOPs and bytes (--units physical) or
  // the reference's multiply-accumulates and elements.
  std::vector<report::RankStep> stage_steps;
  bool physical_units = false;  // every rank
  std::vector<std::string> notes;
};
PlanSummary plan(const Options& options);

}  // namespace stg
