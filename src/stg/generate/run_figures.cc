#include "stg/generate/run_figures.h"

#include <utility>

#include "stg/emit/astra_sim_inputs.h"
#include "stg/emit/astra_sim_plan.h"
#include "stg/emit/v001_limits.h"
#include "stg/io/cancel.h"
#include "stg/models/cp_attention_kv.h"
#include "stg/report/attention_kv.h"
#include "stg/report/stage_figures.h"

namespace stg {

using frameworks::MemoryReport;

MemoryReport memory_report(const Options& o, const models::Workload& w,
                           const lower::LowerOptions& lo, const graph::Graph& g,
                           int64_t ranks_per_stage) {
  if (!o.print_gpu_vram.value_or(false)) return {};
  MemoryReport report = w.framework->memory_report(o, w, lo, g, ranks_per_stage);
  // A decoder split over cp: the K/V its attention kernel holds.
  if (auto kv = models::cp_attention_kv(o, w, w.framework->ep_carved_out_of_dp())) {
    const bool physical = units(o, w) == Units::kPhysical;
    kv->element_bytes = physical ? static_cast<int>(lo.bytes_per_element)
                                 : (o.mixed_precision.value_or(false) ? 2 : 4);
    report.text += report::format_attention_kv(*kv);
  }
  return report;
}

// What the writers share: where files go and what they add up.

std::vector<report::RankStep> stage_steps(
    const std::vector<std::optional<lower::FlatStage>>& stages, const mesh::Mesh& mesh) {
  std::vector<report::RankStep> by_stage;
  for (const auto& stage : stages)
    by_stage.push_back(stage ? report::stage_step(*stage, mesh) : report::RankStep{});
  return by_stage;
}

report::StepFigures step_of_run(const std::vector<report::RankStep>& by_stage,
                                const mesh::Mesh& mesh, const std::vector<RankRange>& ranges,
                                bool physical) {
  report::StepFigures f;
  const int64_t per_stage = mesh.ranks_per_stage();
  for (const auto& [first_rank, last_rank] : ranges)
    for (int64_t rank = first_rank; rank <= last_rank; ++rank)
      if (static_cast<size_t>(rank / per_stage) < by_stage.size())
        f.add(rank, by_stage[static_cast<size_t>(rank / per_stage)]);
  f.units = physical ? "FLOPs and bytes: --units physical"
                     : "--units stg: num_ops in multiply-accumulates or element operations, sizes "
                       "in elements";
  return f;
}

// `stg infer`'s figures: the phases of each stage written, the memory of
// every stage.

namespace {

// `stg infer`'s figures: the phases of each stage written, the memory of
// every stage.
report::ServingFigures serving_figures(const Options& o, const models::Workload& w,
                                       const LoweredRun& run, const mesh::RankLayout& layout) {
  const Serving& s = *o.serving;
  report::ServingFigures f;
  f.prefill = s.prefill;
  f.requests = s.requests;
  f.prompt_len = s.prompt_len;
  f.decode_steps = s.decode_steps;
  f.kv_dtype = dtype_name(s.kv_dtype);
  f.roofline = s.roofline;
  f.hbm_gb = s.hbm_gb;
  const int64_t element_bytes = dtype_bytes(o.dtype.value_or(w.framework->default_dtype()));
  const int64_t per_stage = layout.ranks_per_stage();
  // Disaggregated: which pool a stage is in, and its name.
  const auto pool_of = [&](int st) { return static_cast<int>(st / (w.mesh.stages() / w.pools)); };
  const auto pool_name = [&](int st) -> std::string {
    if (w.pools == 1) return "";
    const int pool = pool_of(st);
    const bool prefill_pool = pool < w.prefill_pools;
    const int count = prefill_pool ? w.prefill_pools : w.pools - w.prefill_pools;
    const std::string name = prefill_pool ? "prefill pool" : "decode pool";
    if (count == 1) return name;
    return name + " " + std::to_string(prefill_pool ? pool : pool - w.prefill_pools) + " of " +
           std::to_string(count);
  };
  for (int st = 0; st < static_cast<int>(w.mesh.stages()); ++st) {
    const report::ServingMemory memory =
        report::stage_memory(run.graph, st, w.values, element_bytes, w.micro_batches);
    if (memory.total() > f.largest.total()) {
      f.largest = memory;
      f.largest_stage = st;
      f.largest_pool = pool_name(st);
    }
    if (!run.stages[st]) continue;
    // Disaggregated: the decode pools' stages have no prefill of their own.
    const bool prefill = s.prefill && pool_of(st) < w.prefill_pools;
    f.stages.push_back({st, st * per_stage, (st + 1) * per_stage - 1, pool_name(st),
                        report::phase_figures(*run.stages[st], prefill), memory});
  }
  return f;
}

// ASTRA-sim's roofline would run some node in 0 ns (emit/astra_sim_plan.h).

}  // namespace

void add_zero_time_note(const LoweredRun& run, const Options& o, std::vector<std::string>& notes) {
  std::vector<const StageGraph*> lowered;
  for (const auto& stage : run.stages) lowered.push_back(stage ? &stage->one() : nullptr);
  const emit::AstraSimMachine m = emit::machine_of(o);
  if (auto note = emit::zero_time_note(lowered, {m.peak_tflops, m.hbm_gbps}))
    notes.push_back(std::move(*note));
}

// What is refused before anything is written: a v0.0.1 message that its
// 32-bit comm_size cannot hold (emit/v001_limits.h), a serving plan whose
// memory does not fit the GPU. Returns the serving figures (`stg infer`).

std::optional<report::ServingFigures> check_before_writing(const Options& o,
                                                           const models::Workload& w,
                                                           const LoweredRun& run,
                                                           const mesh::RankLayout& layout) {
  if (o.schema == emit::Schema::kV001) {
    std::vector<const lower::FlatStage*> stages;
    for (const auto& stage : run.stages) stages.push_back(stage ? &*stage : nullptr);
    if (auto refusal = emit::v001_comm_size_refusal(stages)) throw UsageError(*refusal);
  }
  std::optional<report::ServingFigures> serving;
  if (o.serving) {
    serving = serving_figures(o, w, run, layout);
    require(serving->fits(), report::hbm_refusal(*serving));
  }
  io::throw_if_stopped();
  return serving;
}

// Writes the comm-group file (one writer among the shards of a run) with
// ASTRA-sim's configurations and run.sh, the --dump_after graph and the rank
// files to the staging directory, then commits them; returns the stale rank
// files removed. A run of every rank replaces an earlier run: its rank files
// beyond this run's ranks (those the earlier comm-group file lists) are
// stale; a --ranks part leaves other ranks' files.

RunSummary run_figures(const Options& o, models::Workload& w, const lower::LowerOptions& lo,
                       const LoweredRun& run, const mesh::RankLayout& layout,
                       const std::vector<RankRange>& ranges) {
  RunSummary summary;
  summary.notes = std::move(w.notes);
  // A training run's memory per stage is part of its summary (serving runs
  // have their own figures).
  Options with_memory = o;
  if (!o.serving) with_memory.print_gpu_vram = true;
  MemoryReport memory = memory_report(with_memory, w, lo, run.graph, layout.ranks_per_stage());
  summary.memory = std::move(memory.by_stage);
  if (o.print_gpu_vram.value_or(false)) summary.memory_report = std::move(memory.text);
  summary.stage_steps = stage_steps(run.stages, w.mesh);
  summary.physical_units = lo.kernel_flops;
  summary.step = step_of_run(summary.stage_steps, w.mesh, ranges, lo.kernel_flops);
  summary.ranks = layout.num_ranks();
  summary.stages = layout.pp();
  return summary;
}

}  // namespace stg
