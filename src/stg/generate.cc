#include "stg/generate.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>
#include <thread>
#include <utility>

#include "stg/emit/astra_sim_inputs.h"
#include "stg/emit/astra_sim_plan.h"
#include "stg/emit/flat_writer.h"
#include "stg/emit/trace_writer.h"
#include "stg/emit/v001_limits.h"
#include "stg/frameworks/framework.h"
#include "stg/graph/csv_writer.h"
#include "stg/hardware/gpus.h"
#include "stg/hardware/kernel_model.h"
#include "stg/io/cancel.h"
#include "stg/io/earlier_run.h"
#include "stg/io/output_files.h"
#include "stg/io/output_names.h"
#include "stg/lower/expand_stage.h"
#include "stg/lower/flat_stage.h"
#include "stg/lower/schedule_row.h"
#include "stg/lower/step_growth.h"
#include "stg/mesh/axes.h"
#include "stg/mesh/rank_layout.h"
#include "stg/models/cp_attention_kv.h"
#include "stg/models/parts/context_parallel.h"
#include "stg/models/registry.h"
#include "stg/passes/bind_symbols.h"
#include "stg/passes/insert_collectives.h"
#include "stg/passes/insert_send_recv.h"
#include "stg/passes/mirror_model.h"
#include "stg/passes/pipeline.h"
#include "stg/report/attention_kv.h"
#include "stg/report/stage_figures.h"
#include "stg/util/parallel.h"
#include "stg/workloads/workload_kind.h"

namespace stg {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw UsageError(message);
}

void check_degree(const char* flag, int64_t value) {
  require(value >= 1, std::string(flag) + " " + std::to_string(value) +
                          " is not a valid degree: use a whole number >= 1");
}

// One part of --ranks ("A-B" or "A"), or nullopt when it is not one.
std::optional<RankRange> parse_rank_range(std::string_view text) {
  const auto number = [](std::string_view digits) -> std::optional<int64_t> {
    int64_t value = 0;
    if (digits.empty() || digits.size() > 18) return std::nullopt;
    for (char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
      value = value * 10 + (c - '0');
    }
    return value;
  };
  const size_t dash = text.find('-');
  const auto first = number(text.substr(0, dash));
  const auto last = dash == std::string_view::npos ? first : number(text.substr(dash + 1));
  if (!first || !last || *last < *first) return std::nullopt;
  return RankRange{*first, *last};
}

// --ranks "A-B,C,D-E" (inclusive, increasing; adjacent ranges joined), shard
// i of n (contiguous, balanced; may be empty: last < first), or every rank.
std::vector<RankRange> rank_ranges(const Options& o, int64_t num_ranks) {
  if (o.shard_count > 1 || o.shard_index > 0) {
    require(o.ranks.empty(), "--shard and --ranks both choose the ranks: give only one");
    require(o.shard_count >= 1 && o.shard_index >= 0 && o.shard_index < o.shard_count,
            "--shard " + std::to_string(o.shard_index) + "/" + std::to_string(o.shard_count) +
                " is not valid: use i/n with 0 <= i < n");
    // Shard i holds ranks [i*R/n, (i+1)*R/n): sizes differ by at most one.
    auto start = [&](int64_t i) {
      return static_cast<int64_t>(static_cast<__int128>(i) * num_ranks / o.shard_count);
    };
    return {{start(o.shard_index), start(o.shard_index + 1) - 1}};
  }
  if (o.ranks.empty()) return {{0, num_ranks - 1}};
  std::vector<RankRange> ranges;
  bool valid = true;
  std::string_view rest = o.ranks;
  while (valid) {
    const size_t comma = rest.find(',');
    const auto range = parse_rank_range(rest.substr(0, comma));
    valid = range && range->second < num_ranks &&
            (ranges.empty() || range->first > ranges.back().second);
    if (valid && !ranges.empty() && range->first == ranges.back().second + 1)
      ranges.back().second = range->second;
    else if (valid)
      ranges.push_back(*range);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  require(valid, "--ranks '" + o.ranks +
                     "' is not a list of this run's ranks: use A-B (or A-B,C,D-E in increasing "
                     "order) with 0 <= A <= B <= " +
                     std::to_string(num_ranks - 1));
  return ranges;
}

// --ranks must hold the first rank of every stage: "add 8,16 to --ranks".
void require_first_rank_of_each_stage(const Options& o, const mesh::RankLayout& layout,
                                      const std::vector<RankRange>& ranges) {
  std::string missing;
  for (int64_t stage = 0; stage < layout.pp(); ++stage) {
    const int64_t rank = stage * layout.ranks_per_stage();
    const bool written = std::any_of(ranges.begin(), ranges.end(), [&](const RankRange& r) {
      return r.first <= rank && rank <= r.second;
    });
    if (!written) missing += (missing.empty() ? "" : ",") + std::to_string(rank);
  }
  require(missing.empty(), "--ranks '" + o.ranks +
                               "' leaves out the first rank of a pipeline stage, which "
                               "--print_makespan replays: add " +
                               missing + " to --ranks");
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

passes::PassManager build_pipeline(const Options& o, const models::Workload& w, bool flat) {
  passes::PassManager pm;
  if (!w.bindings.empty()) pm.emplace<passes::BindSymbols>(w.bindings);
  w.kind->add_graph_passes(pm, o, w, flat);
  pm.emplace<passes::AssignStages>(
      w.model.num_blocks, lower::model_chunks(o.pipeline_schedule, o.virtual_stages),
      lower::v_shaped(o.pipeline_schedule), o.pp_balance_cost, w.pools);
  if (lower::mirrors_model(o.pipeline_schedule)) pm.emplace<passes::MirrorModel>();
  pm.emplace<passes::InsertSendRecv>();
  models::add_kernel_passes(pm, {o.cp_algo, static_cast<int>(o.degree["sp"])});
  w.kind->add_link_passes(pm, w);
  pm.emplace<passes::InsertCollectives>(models::sharding_rule(w),
                                        w.framework->collective_creator());
  w.framework->add_issue_passes(pm, o, w);
  return pm;
}

Units units(const Options& o, const models::Workload& w) {
  if (o.units) return *o.units;
  return w.kind->default_units().value_or(w.framework->default_units());
}

// --compute_time model: the kernel model's figures for --gpu's row
// (h100-sxm without one) and the trace's element type.
void add_kernel_model(const Options& o, const models::Workload& w, lower::LowerOptions& lo) {
  if (o.compute_time != Options::ComputeTime::kModel) return;
  require(o.schema != emit::Schema::kV001,
          "--compute_time model writes duration_micros, which --chakra_schema_version v0.0.1 "
          "has no field for: use v0.0.4 (the default) or json");
  emit::machine_of(o);  // refuses --dtype fp8 on a GPU without FP8 tensor cores
  const hardware::Gpu& gpu = o.gpu ? *o.gpu : *hardware::find_gpu("h100-sxm");
  const DType dtype = o.dtype.value_or(w.framework->default_dtype());
  lo.kernel_model = hardware::kernel_figures(gpu, dtype == DType::kFp8);
  lo.kernel_element_bytes = dtype_bytes(dtype);
}

lower::LowerOptions lower_options(const Options& o, const models::Workload& w) {
  const frameworks::Framework& f = *w.framework;
  lower::LowerOptions lo;
  lo.io.mixed_precision = o.mixed_precision.value_or(false);
  if (units(o, w) == Units::kPhysical) {
    lo.flops_per_mac = 2;
    lo.kernel_flops = true;
    lo.bytes_per_element = dtype_bytes(o.dtype.value_or(f.default_dtype()));
    lo.tensor_element_bytes = true;
  } else {
    require(o.dtype.value_or(DType::kBf16) == DType::kBf16,
            "--dtype applies to --units physical only: add --units physical");
  }
  lo.tensor_size_moved = f.tensor_size_moved();
  // The reference's bytes where parity with it is kept (its framework and
  // units); Chakra's ETFeeder's attributes everywhere else.
  lo.feeder_attributes = f.feeder_attributes() || units(o, w) == Units::kPhysical;
  lo.order = f.node_order();
  if (o.astra_sim) {
    const emit::AstraSimMachine machine = emit::machine_of(o);
    lo.roofline = {machine.peak_tflops, machine.hbm_gbps};
  } else if (o.serving) {
    lo.roofline = o.serving->roofline;
  }
  add_kernel_model(o, w, lo);
  w.kind->adjust_lowering(lo);
  lo.schedule = o.pipeline_schedule;
  lo.micro_batches = w.micro_batches;
  require(o.virtual_stages >= 1,
          "--virtual_stages " + std::to_string(o.virtual_stages) + " is not valid: use >= 1");
  require(o.virtual_stages == 1 || lo.schedule->takes_virtual_stages(),
          "--virtual_stages applies to --pipeline_schedule " +
              lower::virtual_stage_schedule_names() + " only: add it or drop --virtual_stages");
  const int chunks = lower::schedule_chunks(lo.schedule, o.virtual_stages);
  const int model_chunks = lower::model_chunks(lo.schedule, o.virtual_stages);
  const int64_t pp = w.mesh.stages();
  const std::string too_few =
      lower::schedule_requirement(lo.schedule, static_cast<int>(pp), w.micro_batches);
  require(too_few.empty(), too_few);
  require(model_chunks == 1 || pp * model_chunks <= w.model.num_blocks,
          lo.schedule->chunks_text(pp, model_chunks) + " is larger than --num_stacks " +
              std::to_string(w.model.num_blocks) +
              ": every virtual stage needs at least one block");
  if (lo.schedule->needs_whole_groups())
    require(w.micro_batches % pp == 0,
            "--pipeline_schedule " + std::string(lo.schedule->name()) +
                " needs a number of micro-batches (--batch / --micro_batch = " +
                std::to_string(w.micro_batches) + ") divisible by --pp " + std::to_string(pp));
  lo.chunks = chunks;
  return lo;
}

std::vector<StageGraph> lower_stages(const graph::Graph& g, const models::Workload& w,
                                     const lower::LowerOptions& options, int threads,
                                     int first_stage, int last_stage) {
  return lower_stages(g, w, w.values, options, threads, first_stage, last_stage);
}

std::vector<StageGraph> lower_stages(const graph::Graph& g, const models::Workload& w,
                                     const expr::Values& values, const lower::LowerOptions& options,
                                     int threads, int first_stage, int last_stage) {
  const int pp = static_cast<int>(w.mesh.stages());
  if (last_stage < 0) last_stage = pp - 1;
  const std::vector<std::vector<int>> members = graph::tensors_by_stage(g, pp);
  // Stages are lowered concurrently; the graph is only read from here on.
  g.evaluate_all();
  std::vector<StageGraph> stages(pp);
  util::parallel_for(first_stage, last_stage + 1, threads, [&](int64_t s) {
    io::throw_if_stopped();  // a stop request (io/cancel.h) is honoured between stages
    stages[s] = lower::lower_stage(g, members[s], static_cast<int>(s), values, options);
  });
  return stages;
}

namespace {

// Rank files a writer thread keeps open at once: up to 64, within half the
// descriptor limit over all threads.
int64_t files_open_per_thread(int threads) {
  rlimit limit{};
  int64_t open_max = 1024;  // when the limit cannot be read
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0)
    open_max =
        limit.rlim_cur == RLIM_INFINITY ? int64_t{1} << 20 : static_cast<int64_t>(limit.rlim_cur);
  return std::clamp<int64_t>((open_max - 64) / (2 * std::max(1, threads)), 1, 64);
}

void check_dump_after(const Options& o, const models::Workload& w) {
  if (o.dump_after.empty()) return;
  const passes::PassManager pipeline = build_pipeline(o, w);
  std::string names;
  for (const std::string& n : pipeline.names()) names += (names.empty() ? "" : ", ") + n;
  require(pipeline.contains(o.dump_after), "--dump_after '" + o.dump_after +
                                               "' is not a pass of this run: use one of " + names +
                                               " (see --print_passes)");
}

// The graph after pass --dump_after, with every micro-batch (the reference's
// graph; the run itself lowers one micro-batch per stage).
std::string dump_graph(const Options& o) {
  models::Workload w = models::build_workload(o);
  graph::Graph g = std::move(w.model.graph);
  passes::Analyses analyses(w.mesh, w.values);
  std::string dump;
  build_pipeline(o, w, /*flat=*/false)
      .run(g, analyses, [&](std::string_view pass, const graph::Graph& after) {
        if (pass == o.dump_after) dump = graph::write_module_csv(after);
        io::throw_if_stopped();
      });
  return dump;
}

// The stages of a run: each lowered once, from a graph of one micro-batch,
// with the others derived (lower/flat_stage.h).
struct LoweredRun {
  graph::Graph graph;  // after the passes, one micro-batch
  std::vector<std::optional<lower::FlatStage>> stages;
};

// Decode steps written from one (lower/step_growth.h): the templates lowered
// again with the context one token longer, and at the last step's.
void grow_decode_steps(const graph::Graph& g, const models::Workload& w,
                       const lower::LowerOptions& one, int threads, int first_stage, int last_stage,
                       int steps, std::vector<StageGraph>& templates) {
  const std::string symbol(w.kind->context_symbol());
  if (symbol.empty() || !w.values.by_symbol.count(symbol))
    throw lower::FlatUnsupported("decode steps without a context length");
  auto at = [&](int64_t tokens_later) {
    expr::Values longer = w.values;
    longer.by_symbol[symbol] += tokens_later;
    return lower_stages(g, w, longer, one, threads, first_stage, last_stage);
  };
  const std::vector<StageGraph> next = at(1);
  const std::vector<StageGraph> last = steps > 2 ? at(steps - 1) : std::vector<StageGraph>{};
  for (int s = first_stage; s <= last_stage; ++s)
    lower::add_step_growth(templates[s], next[s], last.empty() ? nullptr : &last[s], steps);
}

LoweredRun lower_run(const Options& o, models::Workload& w, const lower::LowerOptions& lo,
                     int threads, int first_stage, int last_stage, ProgressListener& listen) {
  LoweredRun run;
  const passes::PassManager pipeline = build_pipeline(o, w, /*flat=*/true);
  run.graph = std::move(w.model.graph);
  passes::Analyses analyses(w.mesh, w.values);
  listen.phase("running passes", static_cast<int64_t>(pipeline.names().size()), "passes");
  pipeline.run(run.graph, analyses, [&](std::string_view, const graph::Graph&) {
    listen.advance(1, 0);
    io::throw_if_stopped();
  });
  listen.phase("lowering", last_stage - first_stage + 1, "stages");
  lower::LowerOptions one = lo;
  one.micro_batches = 1;  // under the run's schedule: it orders the template's steps
  one.order = lower::NodeOrder::kReference;  // the copies' issue order is derived
  std::vector<StageGraph> templates =
      lower_stages(run.graph, w, one, threads, first_stage, last_stage);
  const lower::FlatSchedule schedule = w.kind->schedule(lo);
  run.stages.resize(templates.size());
  try {
    if (schedule.decode_steps > 1)
      grow_decode_steps(run.graph, w, one, threads, first_stage, last_stage, schedule.decode_steps,
                        templates);
    const lower::RecvTags tags = lower::recv_tags(run.graph, static_cast<int>(w.mesh.stages()));
    for (int s = first_stage; s <= last_stage; ++s)
      run.stages[s].emplace(std::move(templates[s]), tags,
                            lower::replica_count(lo.schedule, w.micro_batches), schedule, lo.order);
  } catch (const lower::FlatUnsupported& e) {
    throw UsageError(std::string("the micro-batches of this model cannot be written from one: ") +
                     e.what() + "; use one micro-batch (--micro_batch equal to --batch)");
  }
  return run;
}

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
struct WriteContext {
  const Options& o;
  const OutputPlan& out;
  const mesh::RankLayout& layout;
  const std::vector<std::optional<lower::FlatStage>>& stages;
  io::OutputFiles& files;
  ProgressListener& listen;
  int threads;
  std::atomic<int64_t> bytes{0}, nodes{0};
};

// v0.0.4: ranks of a stage are written in groups, their files open
// together: each piece of the stage is encoded once per group and spliced
// for each rank (emit/flat_writer.h).
void write_v004(WriteContext& c, int64_t first_rank, int64_t last_rank) {
  std::vector<std::optional<emit::FlatStageWriter>> writers(c.stages.size());
  for (size_t s = 0; s < c.stages.size(); ++s)
    if (c.stages[s]) writers[s].emplace(*c.stages[s], c.o.trace_detail);
  struct Group {
    int stage;
    int64_t first, last;
  };
  std::vector<Group> groups;
  const int64_t per_stage = c.layout.ranks_per_stage();
  const int64_t group_size = files_open_per_thread(c.threads);
  for (int64_t r = first_rank; r <= last_rank;) {
    const auto stage = static_cast<int>(r / per_stage);
    const int64_t last = std::min({last_rank, (stage + 1) * per_stage - 1, r + group_size - 1});
    groups.push_back({stage, r, last});
    r = last + 1;
  }
  util::parallel_for(0, static_cast<int64_t>(groups.size()), c.threads, [&](int64_t k) {
    const Group& group = groups[k];
    std::vector<mesh::RankBinding> bindings;
    std::vector<io::OutputFiles::File> rank_files;
    for (int64_t rank = group.first; rank <= group.last; ++rank) {
      bindings.push_back(c.layout.binding(rank));
      rank_files.push_back(c.files.open(io::expand_rank(c.out.rank_pattern, rank)));
    }
    std::vector<int64_t> sizes(bindings.size(), 0);
    writers[group.stage]->write_ranks(bindings, [&](size_t i, std::string_view piece) {
      rank_files[i].append(piece);
      sizes[i] += static_cast<int64_t>(piece.size());
    });
    for (size_t i = 0; i < rank_files.size(); ++i) {
      rank_files[i].close();
      c.bytes += sizes[i];
      c.nodes += static_cast<int64_t>(c.stages[group.stage]->num_nodes());
      c.listen.advance(1, sizes[i]);
    }
  });
}

// v0.0.1 and JSON: libprotobuf / nlohmann writers of each stage's nodes
// written out for every micro-batch (lower/expand_stage.h).
void write_expanded(WriteContext& c, int64_t first_rank, int64_t last_rank) {
  std::vector<StageGraph> expanded(c.stages.size());
  util::parallel_for(0, static_cast<int64_t>(c.stages.size()), c.threads, [&](int64_t s) {
    if (c.stages[s]) expanded[s] = lower::expand(*c.stages[s]);
  });
  util::parallel_for(first_rank, last_rank + 1, c.threads, [&](int64_t rank) {
    const StageGraph& stage = expanded[c.layout.coords_of(rank).stage];
    std::string content;
    emit::append_trace(content, stage, c.layout.binding(rank), c.o.schema, c.o.trace_detail);
    c.files.write(io::expand_rank(c.out.rank_pattern, rank), content);
    c.bytes += static_cast<int64_t>(content.size());
    c.nodes += static_cast<int64_t>(stage.nodes.size());
    c.listen.advance(1, static_cast<int64_t>(content.size()));
  });
}

// What one rank of each stage computes and sends (stages not lowered: none).
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
int64_t write_files(WriteContext& c, const emit::AstraSimPlan& astra_sim, const std::string& dump,
                    bool writes_groups, const std::vector<RankRange>& ranges) {
  if (writes_groups) {
    const std::string groups = c.layout.comm_group_json();
    c.files.write(c.out.comm_group_name, groups);
    c.bytes += static_cast<int64_t>(groups.size());
    for (const emit::AstraSimFile& file : astra_sim.files) {
      c.files.write(file.name, file.content, file.executable);
      c.bytes += static_cast<int64_t>(file.content.size());
    }
  }
  if (!c.o.dump_after.empty()) {
    c.files.write(c.o.dump_after + ".csv", dump);
    c.bytes += static_cast<int64_t>(dump.size());
  }
  c.listen.phase("writing", ranks_in(ranges), "ranks");
  for (const auto& [first_rank, last_rank] : ranges) {
    if (c.o.schema == emit::Schema::kV004)
      write_v004(c, first_rank, last_rank);
    else
      write_expanded(c, first_rank, last_rank);
  }
  std::optional<io::RankFiles> stale;
  const int64_t ranks = c.layout.num_ranks();
  const auto earlier =
      io::earlier_rank_count((std::filesystem::path(c.out.dir) / c.out.comm_group_name).string());
  if (ranks_in(ranges) == ranks && earlier)
    stale = io::RankFiles{c.out.rank_pattern, ranks, *earlier};
  return c.files.commit(stale);
}

// The figures of a lowered run: its notes, memory per stage (the text
// only with --print_gpu_vram), step figures, ranks and stages.
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

}  // namespace

RunSummary generate(const Options& o, ProgressListener* progress) {
  ProgressListener silent;
  ProgressListener& listen = progress ? *progress : silent;
  for (int r = 0; r < mesh::kNumAxes; ++r) check_degree(mesh::kAxes[r].flag, o.degree.row(r));
  const OutputPlan out = resolve_outputs(o);
  listen.phase("building the model", 0, "");
  models::Workload w = models::build_workload(o);
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
  models::Workload w = models::build_workload(o);
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
  MemoryReport memory = memory_report(o, w, lo, run.graph, layout.ranks_per_stage());
  summary.memory = std::move(memory.by_stage);
  summary.memory_report = std::move(memory.text);
  summary.step = step_of_run(stage_steps(run.stages, w.mesh), w.mesh, {{0, summary.ranks - 1}},
                             lo.kernel_flops);
  summary.notes = std::move(w.notes);
  return summary;
}

}  // namespace stg
