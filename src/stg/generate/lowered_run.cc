#include "stg/generate/lowered_run.h"

#include <utility>

#include "stg/emit/astra_sim_inputs.h"
#include "stg/frameworks/framework.h"
#include "stg/graph/csv_writer.h"
#include "stg/hardware/gpus.h"
#include "stg/hardware/kernel_model.h"
#include "stg/io/cancel.h"
#include "stg/lower/schedule_row.h"
#include "stg/lower/step_growth.h"
#include "stg/models/parts/context_parallel.h"
#include "stg/passes/bind_symbols.h"
#include "stg/passes/insert_collectives.h"
#include "stg/passes/insert_send_recv.h"
#include "stg/passes/mirror_model.h"
#include "stg/passes/pipeline.h"
#include "stg/util/parallel.h"
#include "stg/workloads/build_workload.h"
#include "stg/workloads/workload_kind.h"

namespace stg {

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

namespace {

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

}  // namespace

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
  models::Workload w = workloads::build_workload(o);
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

namespace {

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

}  // namespace

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

}  // namespace stg
