#include "stg/generate.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>
#include <utility>

#include "stg/emit/flat_writer.h"
#include "stg/emit/stage_template.h"
#include "stg/emit/trace_writer.h"
#include "stg/graph/csv_writer.h"
#include "stg/io/cancel.h"
#include "stg/io/output_files.h"
#include "stg/io/output_names.h"
#include "stg/lower/flat_stage.h"
#include "stg/mesh/axes.h"
#include "stg/mesh/rank_layout.h"
#include "stg/models/registry.h"
#include "stg/passes/bind_symbols.h"
#include "stg/passes/grad_update.h"
#include "stg/passes/gradient_precision.h"
#include "stg/passes/insert_collectives.h"
#include "stg/passes/insert_send_recv.h"
#include "stg/passes/micro_batch.h"
#include "stg/passes/pipeline.h"
#include "stg/passes/recompute.h"
#include "stg/passes/tie_embeddings.h"
#include "stg/report/megatron_memory.h"
#include "stg/report/memory.h"
#include "stg/report/stage_figures.h"
#include "stg/util/parallel.h"

namespace stg {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw UsageError(message);
}

void check_degree(const char* flag, int64_t value) {
  require(value >= 1, std::string(flag) + " " + std::to_string(value) +
                          " is not a valid degree: use a whole number >= 1");
}

// --ranks A-B (inclusive), shard i of n (contiguous, balanced; may be
// empty: last < first), or every rank.
std::pair<int64_t, int64_t> rank_range(const Options& o, int64_t num_ranks) {
  if (o.shard_count > 1 || o.shard_index > 0) {
    require(o.ranks.empty(), "--shard and --ranks both choose the ranks: give only one");
    require(o.shard_count >= 1 && o.shard_index >= 0 && o.shard_index < o.shard_count,
            "--shard " + std::to_string(o.shard_index) + "/" + std::to_string(o.shard_count) +
                " is not valid: use i/n with 0 <= i < n");
    // Shard i holds ranks [i*R/n, (i+1)*R/n): sizes differ by at most one.
    auto start = [&](int64_t i) {
      return static_cast<int64_t>(static_cast<__int128>(i) * num_ranks / o.shard_count);
    };
    return {start(o.shard_index), start(o.shard_index + 1) - 1};
  }
  if (o.ranks.empty()) return {0, num_ranks - 1};
  const auto dash = o.ranks.find('-');
  int64_t first = -1, last = -1;
  try {
    size_t used = 0;
    first = std::stoll(o.ranks.substr(0, dash), &used);
    if (used != (dash == std::string::npos ? o.ranks.size() : dash)) first = -1;
    last = first;
    if (dash != std::string::npos) {
      last = std::stoll(o.ranks.substr(dash + 1), &used);
      if (used != o.ranks.size() - dash - 1) last = -1;
    }
  } catch (const std::exception&) {
    first = last = -1;
  }
  require(first >= 0 && last >= first && last < num_ranks,
          "--ranks '" + o.ranks +
              "' is not a range of this run's ranks: use A-B with 0 <= A <= B <= " +
              std::to_string(num_ranks - 1));
  return {first, last};
}

int thread_count(const Options& o) {
  return o.threads > 0 ? o.threads
                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

OutputPlan resolve_outputs(const Options& o) {
  OutputPlan out;
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
  if (flat)
    pm.add(std::make_unique<passes::ReplicateMicroBatches>(
        passes::ReplicateMicroBatches::template_of(w.micro_batch_renames)));
  else if (!w.micro_batch_renames.empty())
    pm.emplace<passes::ReplicateMicroBatches>(w.micro_batches, w.micro_batch_renames);
  if (o.recompute() != Recompute::kNone)
    pm.emplace<passes::AddRecomputation>(o.recompute() == Recompute::kSelective);
  pm.emplace<passes::AddWeightUpdates>(w.zero_stage, /*distributed_optimizer=*/o.megatron());
  if (o.megatron())
    pm.emplace<passes::SetGradientPrecision>(
        static_cast<int>(dtype_bytes(o.grad_dtype.value_or(DType::kFp32))));
  pm.emplace<passes::AssignStages>(w.model.num_blocks, o.virtual_stages);
  pm.emplace<passes::InsertSendRecv>();
  if (w.embedding_group >= 0) pm.emplace<passes::TieEmbeddings>(w.embedding_group);
  pm.emplace<passes::InsertCollectives>(models::sharding_rule(w));
  return pm;
}

lower::LowerOptions lower_options(const Options& o, const models::Workload& w) {
  lower::LowerOptions lo;
  lo.io.mixed_precision = o.mixed_precision.value_or(false);
  if (o.units_or_default() == Units::kPhysical) {
    lo.flops_per_mac = 2;
    lo.kernel_flops = true;
    lo.bytes_per_element = dtype_bytes(o.dtype.value_or(DType::kBf16));
    lo.tensor_element_bytes = true;
  } else {
    require(o.dtype.value_or(DType::kBf16) == DType::kBf16,
            "--dtype applies to --units physical only: add --units physical");
  }
  lo.tensor_size_moved = o.megatron();
  // Megatron-LM issues a send or a gradient bucket as soon as its input is
  // ready; the reference numbers its links last (docs/facts.md §5.8).
  lo.order = o.megatron() ? lower::NodeOrder::kIssue : lower::NodeOrder::kReference;
  lo.schedule = o.pipeline_schedule;
  lo.micro_batches = w.micro_batches;
  lo.pp = static_cast<int>(w.mesh.stages());
  const int chunks = o.virtual_stages;
  require(chunks >= 1, "--virtual_stages " + std::to_string(chunks) + " is not valid: use >= 1");
  require(chunks == 1 || lo.schedule == lower::Schedule::kInterleaved,
          "--virtual_stages applies to --pipeline_schedule interleaved only: add it or drop "
          "--virtual_stages");
  const int64_t pp = w.mesh.stages();
  require(chunks == 1 || pp * chunks <= w.model.num_blocks,
          "--pp " + std::to_string(pp) + " x --virtual_stages " + std::to_string(chunks) +
              " is larger than --num_stacks " + std::to_string(w.model.num_blocks) +
              ": every virtual stage needs at least one block");
  if (lo.schedule == lower::Schedule::kInterleaved)
    require(w.micro_batches % pp == 0,
            "--pipeline_schedule interleaved needs a number of micro-batches (--batch / "
            "--micro_batch = " +
                std::to_string(w.micro_batches) + ") divisible by --pp " + std::to_string(pp));
  lo.chunks = chunks;
  return lo;
}

std::vector<StageGraph> lower_stages(const graph::Graph& g, const models::Workload& w,
                                     const lower::LowerOptions& options, int threads,
                                     int first_stage, int last_stage) {
  const int pp = static_cast<int>(w.mesh.stages());
  if (last_stage < 0) last_stage = pp - 1;
  const std::vector<std::vector<int>> members = graph::tensors_by_stage(g, pp);
  // Stages are lowered concurrently; the graph is only read from here on.
  g.evaluate_all();
  std::vector<StageGraph> stages(pp);
  util::parallel_for(first_stage, last_stage + 1, threads, [&](int64_t s) {
    io::throw_if_stopped();  // a stop request (io/cancel.h) is honoured between stages
    stages[s] = lower::lower_stage(g, members[s], static_cast<int>(s), w.values, options);
  });
  return stages;
}

namespace {

// Rank files a writer thread keeps open at once (flat stages): up to 64,
// within half the descriptor limit over all threads.
int64_t files_open_per_thread(int threads) {
  rlimit limit{};
  int64_t open_max = 1024;  // when the limit cannot be read
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0)
    open_max =
        limit.rlim_cur == RLIM_INFINITY ? int64_t{1} << 20 : static_cast<int64_t>(limit.rlim_cur);
  return std::clamp<int64_t>((open_max - 64) / (2 * std::max(1, threads)), 1, 64);
}

// Micro-batches of the real lowering a flat stage is checked against: two,
// or one round of the interleaved schedule (it needs a multiple of pp).
int flat_check_count(const lower::LowerOptions& lo) {
  return lo.schedule == lower::Schedule::kInterleaved ? std::max(2, lo.pp) : 2;
}

// The flat stages derived from `templates` for `count` micro-batches are
// checked, byte for byte on each stage's first rank, against the stages of
// a graph with `count` micro-batches lowered as the run without flat stages
// would: the derivation (lower/flat_stage.h) assumes the passes treat each
// micro-batch alike, and a model where they do not (a spreadsheet of one's
// own, say) is then written the slow way instead of wrongly. Throws
// lower::FlatUnsupported on a difference.
void check_flat_stages(const Options& o, const lower::LowerOptions& lo, int count,
                       const std::vector<StageGraph>& templates, const lower::RecvTags& tags,
                       const lower::FlatSchedule& schedule, const mesh::RankLayout& layout,
                       int threads, int first_stage, int last_stage) {
  models::Workload w = models::build_workload(o);
  w.micro_batches = count;
  graph::Graph g = std::move(w.model.graph);
  passes::Analyses analyses(w.mesh, w.values);
  build_pipeline(o, w).run(g, analyses,
                           [](std::string_view, const graph::Graph&) { io::throw_if_stopped(); });
  lower::LowerOptions options = lo;
  options.micro_batches = count;
  const std::vector<StageGraph> real =
      lower_stages(g, w, options, threads, first_stage, last_stage);
  std::string expected, derived;
  for (int s = first_stage; s <= last_stage; ++s) {
    const mesh::RankBinding rank = layout.binding(s * layout.ranks_per_stage());
    expected.clear();
    emit::StageTemplate(real[s], o.trace_detail).append_rank(expected, rank);
    const lower::FlatStage stage(templates[s], tags, count, schedule, lo.order);
    derived.clear();
    emit::FlatStageWriter(stage, o.trace_detail).write_rank(rank, [&](std::string_view piece) {
      derived += piece;
    });
    if (derived != expected)
      throw lower::FlatUnsupported("stage " + std::to_string(s) +
                                   ": the derived micro-batches differ from lowered ones");
  }
}

}  // namespace

RunSummary generate(const Options& o, ProgressListener* progress) {
  ProgressListener silent;
  ProgressListener& listen = progress ? *progress : silent;
  for (int r = 0; r < mesh::kNumAxes; ++r) check_degree(mesh::kAxes[r].flag, o.degree.row(r));
  const OutputPlan out = resolve_outputs(o);

  // Flat micro-batches where the run allows them (lower/flat_stage.h):
  // protobuf traces, the graph not dumped, more micro-batches than the check
  // lowers, and a node order the flat stage derives (issue order only under
  // a pipeline schedule).
  const bool want_flat =
      o.flat_micro_batches && o.schema == emit::Schema::kV004 && o.dump_after.empty();
  listen.phase("building the model", 0, "");
  models::Workload w = models::build_workload(o);
  const lower::LowerOptions lo = lower_options(o, w);
  const int check_count = flat_check_count(lo);
  const bool try_flat =
      want_flat && w.micro_batches > check_count && !w.micro_batch_renames.empty() &&
      (lo.order == lower::NodeOrder::kReference || lo.schedule != lower::Schedule::kNone);
  {
    const passes::PassManager pipeline = build_pipeline(o, w);
    if (!o.dump_after.empty())
      require(
          pipeline.contains(o.dump_after), "--dump_after '" + o.dump_after +
                                               "' is not a pass of this run: use one of " +
                                               [&] {
                                                 std::string names;
                                                 for (const std::string& n : pipeline.names())
                                                   names += (names.empty() ? "" : ", ") + n;
                                                 return names;
                                               }() +
                                               " (see --print_passes)");
  }
  const int threads = thread_count(o);

  // Nothing is written before the staging directory exists (files.prepare());
  // a stop request (io/cancel.h) is honoured between passes, between stages
  // and while writing.
  io::OutputFiles files(out.dir);
  std::string dump;
  std::vector<StageGraph> stages;
  std::vector<std::optional<lower::FlatStage>> flat;
  graph::Graph g;
  const mesh::RankLayout layout(w.mesh);
  const auto [first_rank, last_rank] = rank_range(o, layout.num_ranks());
  // A part of the ranks (--ranks, --shard) needs only its stages.
  const int first_stage = static_cast<int>(first_rank / layout.ranks_per_stage());
  const int last_stage =
      static_cast<int>(std::max<int64_t>(first_rank, last_rank) / layout.ranks_per_stage());
  // Runs the passes and lowers the stages; `as_flat`: the template.
  auto prepare = [&](bool as_flat) {
    const passes::PassManager pipeline = build_pipeline(o, w, as_flat);
    g = std::move(w.model.graph);
    passes::Analyses analyses(w.mesh, w.values);
    listen.phase("running passes", static_cast<int64_t>(pipeline.names().size()), "passes");
    pipeline.run(g, analyses, [&](std::string_view pass, const graph::Graph& after) {
      if (pass == o.dump_after) dump = graph::write_module_csv(after);
      listen.advance(1, 0);
      io::throw_if_stopped();
    });
    listen.phase("lowering", last_stage - first_stage + 1, "stages");
    if (!as_flat) {
      stages = lower_stages(g, w, lo, threads, first_stage, last_stage);
      return;
    }
    lower::LowerOptions one = lo;
    one.micro_batches = 1;  // under the run's schedule: it orders the template's steps
    std::vector<StageGraph> templates = lower_stages(g, w, one, threads, first_stage, last_stage);
    const lower::RecvTags tags = lower::recv_tags(g, static_cast<int>(w.mesh.stages()));
    const lower::FlatSchedule schedule{lo.schedule, lo.pp, lo.chunks};
    check_flat_stages(o, lo, check_count, templates, tags, schedule, layout, threads, first_stage,
                      last_stage);
    flat.resize(templates.size());
    for (int s = first_stage; s <= last_stage; ++s)
      flat[s].emplace(std::move(templates[s]), tags, w.micro_batches, schedule, lo.order);
  };
  try {
    try {
      prepare(try_flat);
    } catch (const lower::FlatUnsupported&) {
      // Not a structure the flat stage derives: lower every micro-batch.
      flat.clear();
      w = models::build_workload(o);
      prepare(false);
    }
    io::throw_if_stopped();
  } catch (const expr::SizeError& e) {
    throw UsageError(e.what());
  } catch (io::OutputError& e) {
    e.append(files.abort());
    throw;
  }

  try {
    files.prepare(out.subdirs);
  } catch (const io::OutputError& e) {
    throw UsageError(std::string("--output_dir: ") + e.what());
  }
  RunSummary summary;
  summary.notes = std::move(w.notes);
  if (o.print_gpu_vram.value_or(false) && o.megatron()) {
    report::MegatronMemoryOptions m;
    m.model = o.model_kind();
    m.sequence_parallel = o.tpsp.value_or(true);
    m.recompute = o.recompute();
    // fp8 training computes in fp8 but keeps bf16 weights (Megatron-LM).
    m.weight_bytes = std::max(2, static_cast<int>(dtype_bytes(o.dtype.value_or(DType::kBf16))));
    m.grad_bytes = static_cast<int>(dtype_bytes(o.grad_dtype.value_or(DType::kFp32)));
    m.zero_stage = w.zero_stage;
    m.schedule = lo.schedule;
    m.micro_batches = w.micro_batches;
    m.chunks = lo.chunks;
    summary.memory = report::megatron_memory_by_stage(g, w.mesh, w.values, m);
    summary.memory_report =
        report::format_megatron_memory(summary.memory, layout.ranks_per_stage(), m.recompute);
  } else if (o.print_gpu_vram.value_or(false)) {
    report::MemoryOptions m;
    m.mixed_precision = lo.io.mixed_precision;
    m.zero_stage = w.zero_stage;
    m.schedule = lo.schedule;
    m.micro_batches = w.micro_batches;
    m.chunks = lo.chunks;
    summary.memory = report::memory_by_stage(g, w.mesh, w.values, m);
    summary.memory_report = report::format_memory(summary.memory, layout.ranks_per_stage());
  }
  {
    std::vector<report::RankStep> by_stage;
    for (const StageGraph& stage : stages) by_stage.push_back(report::stage_step(stage, w.mesh));
    for (const auto& stage : flat)
      by_stage.push_back(stage ? report::stage_step(*stage, w.mesh) : report::RankStep{});
    summary.step =
        report::step_figures(by_stage, w.mesh, first_rank, last_rank,
                             lo.kernel_flops ? "FLOPs and bytes: --units physical"
                                             : "--units stg: num_ops in multiply-accumulates or "
                                               "element operations, sizes in elements");
  }
  summary.ranks = layout.num_ranks();
  summary.comm_group_path = out.comm_group_name;
  const std::string groups = layout.comm_group_json();
  std::atomic<int64_t> bytes{static_cast<int64_t>(groups.size())}, nodes{0};
  // Every file goes to the staging directory; commit() moves them into place.
  // On an error or a stop request abort() removes the staging directory and
  // the message says what that left ("...: nothing was written to DIR").
  try {
    // One writer of the comm-group file among the shards of a run.
    if (o.shard_index == 0) files.write(out.comm_group_name, groups);
    if (!o.dump_after.empty()) {
      files.write(o.dump_after + ".csv", dump);
      bytes += static_cast<int64_t>(dump.size());
    }
    // v0.0.4: each stage serialised once, ranks only splice in their values.
    std::vector<emit::StageTemplate> templates;
    if (o.schema == emit::Schema::kV004)
      for (const StageGraph& stage : stages) templates.emplace_back(stage, o.trace_detail);
    std::vector<std::optional<emit::FlatStageWriter>> writers(flat.size());
    for (size_t s = 0; s < flat.size(); ++s)
      if (flat[s]) writers[s].emplace(*flat[s], o.trace_detail);
    listen.phase("writing", last_rank - first_rank + 1, "ranks");
    if (!flat.empty()) {
      // Ranks of a stage are written in groups, their files open together:
      // each piece of the stage is encoded once per group and spliced for
      // each rank (emit/flat_writer.h).
      struct Group {
        int stage;
        int64_t first, last;
      };
      std::vector<Group> groups;
      const int64_t per_stage = layout.ranks_per_stage();
      const int64_t group_size = files_open_per_thread(threads);
      for (int64_t r = first_rank; r <= last_rank;) {
        const auto stage = static_cast<int>(r / per_stage);
        const int64_t last = std::min({last_rank, (stage + 1) * per_stage - 1, r + group_size - 1});
        groups.push_back({stage, r, last});
        r = last + 1;
      }
      util::parallel_for(0, static_cast<int64_t>(groups.size()), threads, [&](int64_t k) {
        const Group& group = groups[k];
        std::vector<mesh::RankBinding> bindings;
        std::vector<io::OutputFiles::File> rank_files;
        for (int64_t rank = group.first; rank <= group.last; ++rank) {
          bindings.push_back(layout.binding(rank));
          rank_files.push_back(files.open(io::expand_rank(out.rank_pattern, rank)));
        }
        std::vector<int64_t> sizes(bindings.size(), 0);
        writers[group.stage]->write_ranks(bindings, [&](size_t i, std::string_view piece) {
          rank_files[i].append(piece);
          sizes[i] += static_cast<int64_t>(piece.size());
        });
        for (size_t i = 0; i < rank_files.size(); ++i) {
          rank_files[i].close();
          bytes += sizes[i];
          nodes += static_cast<int64_t>(flat[group.stage]->num_nodes());
          listen.advance(1, sizes[i]);
        }
      });
    } else {
      util::parallel_for(first_rank, last_rank + 1, threads, [&](int64_t rank) {
        const mesh::RankBinding binding = layout.binding(rank);
        const int stage_index = static_cast<int>(layout.coords_of(rank).stage);
        const StageGraph& stage = stages[stage_index];
        std::string content;
        if (templates.empty()) {
          emit::append_trace(content, stage, binding, o.schema, o.trace_detail);
        } else {
          templates[stage_index].append_rank(content, binding);
        }
        files.write(io::expand_rank(out.rank_pattern, rank), content);
        bytes += static_cast<int64_t>(content.size());
        nodes += static_cast<int64_t>(stage.nodes.size());
        listen.advance(1, static_cast<int64_t>(content.size()));
      });
    }
    // A run of every rank replaces an earlier run: its rank files beyond
    // this run's ranks are stale. A --ranks part leaves other ranks' files.
    std::optional<io::RankFiles> stale;
    if (first_rank == 0 && last_rank == layout.num_ranks() - 1)
      stale = io::RankFiles{out.rank_pattern, layout.num_ranks()};
    files.commit(stale);
  } catch (io::OutputError& e) {
    e.append(files.abort());
    throw;
  }
  summary.flat_micro_batches = !flat.empty();
  summary.files = last_rank - first_rank + 2 + (o.dump_after.empty() ? 0 : 1);
  summary.bytes = bytes;
  summary.nodes = nodes;
  return summary;
}

}  // namespace stg
