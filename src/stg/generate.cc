#include "stg/generate.h"

#include <algorithm>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "stg/emit/astra_sim_plan.h"
#include "stg/generate/lowered_run.h"
#include "stg/generate/rank_ranges.h"
#include "stg/generate/run_figures.h"
#include "stg/generate/run_files.h"
#include "stg/io/cancel.h"
#include "stg/io/output_files.h"
#include "stg/io/output_names.h"
#include "stg/mesh/axes.h"
#include "stg/mesh/rank_layout.h"
#include "stg/workloads/build_workload.h"

namespace stg {
namespace {

void check_degree(const char* flag, int64_t value) {
  require(value >= 1, std::string(flag) + " " + std::to_string(value) +
                          " is not a valid degree: use a whole number >= 1");
}

int thread_count(const Options& o) {
  return o.threads > 0 ? o.threads
                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

OutputPlan resolve_outputs(const Options& o) {
  OutputPlan out;
  require(!o.output_dir.empty(),
          "--output_dir must not be empty: give a directory (. for the current one)");
  out.dir = o.output_dir;
  out.rank_pattern = io::complete_rank_pattern(o.output_name);
  try {
    io::check_rank_pattern(out.rank_pattern);
  } catch (const io::OutputError& e) {
    throw UsageError("--output_name '" + o.output_name + "' " + e.what());
  }
  // Only the protobuf traces are read by ASTRA-sim.
  if (o.schema != emit::Schema::kJson && !o.allow_any_name)
    require(io::astra_sim_can_open(out.rank_pattern),
            "--output_name '" + o.output_name + "' gives files ASTRA-sim cannot open: it reads " +
                "PREFIX.<rank>.et, so the name must be PREFIX.%d.et (e.g. workload.%d.et); " +
                "--allow_any_name keeps it");
  if (o.comm_group_file) {
    out.comm_group_name = *o.comm_group_file;
    require(!out.comm_group_name.empty(), "--comm_group_file must not be empty: give a file name");
  } else {
    out.comm_group_name = io::derived_comm_group_name(out.rank_pattern);
  }
  // Every name stays inside --output_dir: nothing is written or removed
  // elsewhere.
  const std::string name_outside = io::outside_output_dir(out.rank_pattern);
  require(name_outside.empty(), "--output_name '" + o.output_name + "' " + name_outside +
                                    ": give a name inside --output_dir and the directory "
                                    "with --output_dir");
  const std::string group_outside = io::outside_output_dir(out.comm_group_name);
  require(group_outside.empty(), "--comm_group_file '" + out.comm_group_name + "' " +
                                     group_outside +
                                     ": give a name inside --output_dir (it is written there)");
  // Sub-directories of --output_dir that the names need are created with it.
  const std::string trace_dir = io::directory_part(out.rank_pattern);
  require(trace_dir.find("%d") == std::string::npos,
          "--output_name '" + o.output_name +
              "' has %d in a directory: put the rank in the file name (e.g. "
              "traces/workload.%d.et)");
  for (const std::string& sub : {trace_dir, io::directory_part(out.comm_group_name)})
    if (!sub.empty()) out.subdirs.push_back(sub);
  return out;
}

RunSummary generate(const Options& o, ProgressListener* progress) {
  ProgressListener silent;
  ProgressListener& listen = progress ? *progress : silent;
  for (int r = 0; r < mesh::kNumAxes; ++r) check_degree(mesh::kAxes[r].flag, o.degree.row(r));
  const OutputPlan out = resolve_outputs(o);
  listen.phase("building the model", 0, "");
  models::Workload w = workloads::build_workload(o);
  const lower::LowerOptions lo = lower_options(o, w);
  check_dump_after(o, w);
  const int threads = thread_count(o);
  const mesh::RankLayout layout(w.mesh);
  const std::vector<RankRange> ranges = rank_ranges(o, layout.num_ranks());
  const int64_t first_rank = ranges.front().first, last_rank = ranges.back().second;
  if (o.needs_first_rank_of_each_stage) require_first_rank_of_each_stage(o, layout, ranges);
  const emit::AstraSimPlan astra_sim =
      emit::plan_astra_sim(o, out.rank_pattern, out.comm_group_name, w.mesh, units(o, w), w.notes);
  // A part of the ranks (--ranks, --shard) needs only its stages.
  const int first_stage = static_cast<int>(first_rank / layout.ranks_per_stage());
  const int last_stage =
      static_cast<int>(std::max<int64_t>(first_rank, last_rank) / layout.ranks_per_stage());

  // Nothing is written before the staging directory exists (files.prepare());
  // a stop request (io/cancel.h) is honoured between passes, between stages
  // and while writing.
  io::OutputFiles files(out.dir);
  LoweredRun run;
  std::string dump;
  std::optional<report::ServingFigures> serving;
  try {
    run = lower_run(o, w, lo, threads, first_stage, last_stage, listen);
    if (!o.dump_after.empty()) dump = dump_graph(o);
    if (!astra_sim.files.empty() && o.compute_time == Options::ComputeTime::kRoofline)
      add_zero_time_note(run, o, w.notes);
    serving = check_before_writing(o, w, run, layout);
  } catch (const expr::SizeError& e) {
    throw UsageError(e.what());
  } catch (io::OutputError& e) {
    e.append(files.abort());
    throw;
  }
  try {
    files.prepare(out.subdirs);
  } catch (const io::OutputError& e) {
    throw UsageError("--output_dir: " + std::string(e.what()) +
                     ": give a directory that can be created and written");
  }
  RunSummary summary = run_figures(o, w, lo, run, layout, ranges);
  summary.serving = std::move(serving);
  summary.comm_group_path = out.comm_group_name;
  WriteContext c{o, out, layout, run.stages, files, listen, threads};
  const bool writes_groups = o.shard_index == 0;
  // Every file goes to the staging directory; commit() moves them into place.
  // On an error or a stop request abort() removes the staging directory and
  // the message says what that left ("...: nothing was written to DIR").
  try {
    summary.stale_files_removed = write_files(c, astra_sim, dump, writes_groups, ranges);
  } catch (io::OutputError& e) {
    e.append(files.abort());
    throw;
  }
  summary.first_rank = first_rank;
  summary.last_rank = last_rank;
  summary.rank_ranges = ranges;
  summary.files = ranks_in(ranges) +
                  (writes_groups ? 1 + static_cast<int64_t>(astra_sim.files.size()) : 0) +
                  (o.dump_after.empty() ? 0 : 1);
  summary.bytes = c.bytes;
  summary.nodes = c.nodes;
  return summary;
}

PlanSummary plan(const Options& options) {
  Options o = options;
  o.print_gpu_vram = true;  // the memory per rank is part of a plan
  for (int r = 0; r < mesh::kNumAxes; ++r) check_degree(mesh::kAxes[r].flag, o.degree.row(r));
  resolve_outputs(o);  // the same refusals as a run
  models::Workload w = workloads::build_workload(o);
  const lower::LowerOptions lo = lower_options(o, w);
  const int threads = thread_count(o);
  const mesh::RankLayout layout(w.mesh);
  const int last_stage = static_cast<int>(w.mesh.stages()) - 1;
  ProgressListener silent;
  LoweredRun run;
  try {
    run = lower_run(o, w, lo, threads, 0, last_stage, silent);
  } catch (const expr::SizeError& e) {
    throw UsageError(e.what());
  }
  PlanSummary summary;
  summary.ranks = layout.num_ranks();
  summary.ranks_per_stage = layout.ranks_per_stage();
  summary.micro_batches = w.micro_batches;
  for (const auto& stage : run.stages) {
    const int64_t n = stage ? static_cast<int64_t>(stage->num_nodes()) : 0;
    summary.nodes_per_stage.push_back(n);
    summary.nodes += n * summary.ranks_per_stage;
  }
  frameworks::MemoryReport memory = memory_report(o, w, lo, run.graph, layout.ranks_per_stage());
  summary.memory = std::move(memory.by_stage);
  summary.memory_report = std::move(memory.text);
  summary.step = step_of_run(stage_steps(run.stages, w.mesh), w.mesh, {{0, summary.ranks - 1}},
                             lo.kernel_flops);
  summary.notes = std::move(w.notes);
  return summary;
}

}  // namespace stg
