#include "stg/generate.h"

#include <atomic>
#include <cstdio>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "stg/emit/stage_template.h"
#include "stg/emit/trace_writer.h"
#include "stg/io/output_files.h"
#include "stg/io/progress.h"
#include "stg/lower/lower_stage.h"
#include "stg/lower/rank_layout.h"
#include "stg/lower/schedule.h"
#include "stg/models/csv_model.h"
#include "stg/models/gpt.h"
#include "stg/models/moe.h"
#include "stg/models/transformer.h"
#include "stg/passes/grad_update.h"
#include "stg/passes/micro_batch.h"
#include "stg/passes/pipeline.h"
#include "stg/passes/recompute.h"
#include "stg/report/memory.h"

namespace stg {
namespace {

struct Plan {
  models::Model model;
  passes::PipelinePlan pipeline;
  lower::Values values;
  lower::LowerOptions lower;
  std::array<int64_t, kNumAxes> degree{};
  emit::Schema schema = emit::Schema::kV004;
  passes::UpdateOptions update;
  int micro_batches = 1;
};

void require(bool ok, const std::string& message) {
  if (!ok) throw UsageError(message);
}

void check_degree(const char* flag, int64_t value) {
  require(value >= 1, std::string(flag) + " " + std::to_string(value) +
                          " is not a valid degree: use a whole number >= 1");
}

emit::Schema parse_schema(const std::string& s) {
  if (s == "v0.0.4") return emit::Schema::kV004;
  if (s == "v0.0.1") return emit::Schema::kV001;
  if (s == "json") return emit::Schema::kJson;
  throw UsageError("--chakra_schema_version '" + s + "' is unknown: use v0.0.4, v0.0.1 or json");
}

// Flags of the later models that the seed transformer does not have.
void refuse_later_flags(const Options& o) {
  auto refuse = [&](bool given, const char* flag) {
    require(!given, std::string(flag) + " does not apply to --model_type transformer: " +
                        "drop it or choose --model_type gpt, llama or moe");
  };
  refuse(o.dvocal.has_value(), "--dvocal");
  refuse(o.kvhead.has_value(), "--kvhead");
  refuse(o.experts.has_value(), "--experts");
  refuse(o.kexperts.has_value(), "--kexperts");
  refuse(o.micro_batch.has_value(), "--micro_batch");
  refuse(o.tpsp.has_value(), "--tpsp");
  refuse(o.ep != 1, "--ep");
}

// --weight_sharded 1 is ZeRO stage 3.
int zero_stage(const Options& o) {
  const int zero = o.zero_stage.value_or(o.weight_sharded ? 3 : 0);
  require(zero >= 0 && zero <= 3,
          "--zero_stage " + std::to_string(zero) + " is not valid: use 0, 1, 2 or 3");
  require(!o.weight_sharded || zero == 3,
          "--weight_sharded 1 is ZeRO stage 3: drop it or use --zero_stage 3");
  return zero;
}

// A model dimension: its symbol, flag, the value given (if any) and default.
struct Dim {
  const char* symbol;
  const char* flag;
  std::optional<int64_t> given;
  int64_t fallback;
};

void bind_dims(Plan& p, const std::vector<Dim>& dims) {
  for (const Dim& d : dims) {
    const int64_t v = d.given.value_or(d.fallback);
    require(v >= 1, std::string(d.flag) + " " + std::to_string(v) +
                        " is not a valid size: use a whole number >= 1");
    p.values.by_symbol[d.symbol] = v;
    p.values.flag_of[d.symbol] = d.flag;
  }
}

void bind_degree(Plan& p, const char* symbol, const char* flag, int64_t value) {
  p.values.by_symbol[symbol] = value;
  p.values.flag_of[symbol] = flag;
}

Plan plan_transformer(const Options& o) {
  refuse_later_flags(o);
  Plan p;
  // The seed's defaults.
  bind_dims(p, {{"Din", "--din", o.din, 51200},
                {"Dout", "--dout", o.dout, 25600},
                {"Dmodel", "--dmodel", o.dmodel, 25600},
                {"Dff", "--dff", o.dff, 102400},
                {"Batch", "--batch", o.batch, 1024},
                {"Seq", "--seq", o.seq, 1024},
                {"Head", "--head", o.head, 1024}});
  const int64_t stacks = o.num_stacks.value_or(32);
  require(stacks >= 1, "--num_stacks " + std::to_string(stacks) + " is not valid: use >= 1");
  require(o.pp <= stacks + 2, "--pp " + std::to_string(o.pp) + " is larger than --num_stacks " +
                                  std::to_string(stacks) +
                                  " + 2: every stage needs a block or an "
                                  "embedding");
  bind_degree(p, "dp", "--dp", o.dp);
  bind_degree(p, "tp", "--tp", o.tp);
  bind_degree(p, "sp", "--sp", o.sp);
  bind_degree(p, "pp", "--pp", o.pp);
  const int zero = zero_stage(o);
  require(zero == 0 || zero == 3, "--zero_stage " + std::to_string(zero) +
                                      " needs --model_type gpt, llama or moe (the seed transformer "
                                      "knows FSDP only: --zero_stage 3)");
  p.model = models::build_transformer({static_cast<int>(stacks), zero == 3});
  p.update.zero_stage = zero;
  p.degree = {o.dp, o.tp, o.sp, 1};
  return p;
}

std::string num(int64_t v) { return std::to_string(v); }

int64_t dtype_bytes(const std::string& dtype) {
  if (dtype == "fp32") return 4;
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "fp8") return 1;
  throw UsageError("--dtype '" + dtype + "' is unknown: use fp32, bf16, fp16 or fp8");
}

// The later reference's models: gpt (alias dense), llama and moe.
Plan plan_later(const Options& o) {
  const bool moe = o.model_type == "moe";
  const bool llama = o.model_type == "llama";
  // The reference accepts these for every model and ignores some of them:
  // stay compatible with its command lines, but say so instead of ignoring.
  auto note = [&](bool given, const std::string& flag) {
    if (given)
      std::fprintf(stderr, "stg: note: %s has no effect with --model_type %s\n", flag.c_str(),
                   o.model_type.c_str());
  };
  if (!moe) {
    note(o.experts.has_value(), "--experts");
    note(o.kexperts.has_value(), "--kexperts");
  }
  require(!o.din.has_value() && !o.dout.has_value(),
          "--din/--dout belong to --model_type transformer: use --dvocal for " + o.model_type);
  Plan p;
  const int64_t batch = o.batch.value_or(64);
  const int64_t micro = o.micro_batch.value_or(batch);
  bind_dims(p, {{"Dvocal", "--dvocal", o.dvocal, 32000},
                {"Dmodel", "--dmodel", o.dmodel, 8192},
                {"Dff", "--dff", o.dff, 28672},
                {"Batch", "--batch", batch, 64},
                {"MicroBatch", "--micro_batch", micro, batch},
                {"Seq", "--seq", o.seq, 1024},
                {"Head", "--head", o.head, 64},
                {"KVHead", "--kvhead", o.kvhead, 8},
                {"Experts", "--experts", o.experts, 8},
                {"KExperts", "--kexperts", o.kexperts, 2}});
  const auto& v = p.values.by_symbol;
  require(batch % micro == 0, "--batch " + num(batch) + " is not divisible by --micro_batch " +
                                  num(micro) +
                                  ": choose a micro-batch size that divides the batch");
  require(micro % o.dp == 0, "--micro_batch " + num(micro) + " is not divisible by --dp " +
                                 num(o.dp) + ": each data-parallel rank needs a whole share");
  const int64_t stacks = o.num_stacks.value_or(80);
  require(stacks >= 1, "--num_stacks " + num(stacks) + " is not valid: use >= 1");
  require(o.pp <= stacks + 2, "--pp " + num(o.pp) + " is larger than --num_stacks " + num(stacks) +
                                  " + 2: every stage needs a block or an embedding");
  const bool tpsp = o.tpsp.value_or(true);
  require(tpsp || !moe,
          "--tpsp 0 is not available for --model_type moe: its layouts need "
          "sequence-sharded activations (use --tpsp 1)");
  // The reference's dense path multiplies tp by ep; moe has ep as its own axis.
  const int64_t tp = moe ? o.tp : o.tp * o.ep;
  if (tpsp)
    require(v.at("Seq") % (o.sp * tp) == 0,
            "--seq " + num(v.at("Seq")) + " is not divisible by --sp * --tp = " + num(o.sp * tp) +
                ": with --tpsp 1 the sequence is split over both");
  require(v.at("Head") % tp == 0, "--head " + num(v.at("Head")) + " is not divisible by --tp " +
                                      num(tp) + ": every tensor-parallel rank needs whole heads");
  if (llama || moe) {
    require(v.at("Head") % v.at("KVHead") == 0, "--kvhead " + num(v.at("KVHead")) +
                                                    " does not divide --head " + num(v.at("Head")) +
                                                    ": query heads are shared by whole groups");
    require(v.at("KVHead") % tp == 0, "--kvhead " + num(v.at("KVHead")) +
                                          " is not divisible by --tp " + num(tp) +
                                          ": every tensor-parallel rank needs whole KV heads");
  } else {
    note(o.kvhead.has_value(), "--kvhead (grouped-query attention is --model_type llama)");
  }
  if (moe) {
    require(v.at("Experts") % o.ep == 0, "--experts " + num(v.at("Experts")) +
                                             " is not divisible by --ep " + num(o.ep) +
                                             ": every expert-parallel rank holds whole experts");
    require(v.at("KExperts") <= v.at("Experts"),
            "--kexperts " + num(v.at("KExperts")) + " is larger than --experts " +
                num(v.at("Experts")) + ": a token cannot pick more experts than exist");
  }
  bind_degree(p, "dp", "--dp", o.dp);
  bind_degree(p, "tp", "--tp", tp);
  bind_degree(p, "cp", "--sp", o.sp);
  bind_degree(p, "ep", "--ep", o.ep);
  bind_degree(p, "pp", "--pp", o.pp);
  models::Model model =
      moe ? models::build_moe({static_cast<int>(stacks), static_cast<int>(v.at("Experts") / o.ep)})
          : models::build_gpt({static_cast<int>(stacks), tpsp, llama});
  p.model.axes = model.axes;
  p.model.num_blocks = model.num_blocks;
  p.micro_batches = static_cast<int>(batch / micro);
  const int zero = zero_stage(o);
  const expr::Expr dp = expr::Expr::symbol("dp"), one = expr::Expr::constant(1);
  model.graph.substitute({{"fsdp", zero == 3 ? dp : one}, {"gshard", zero >= 2 ? dp : one}});
  p.model.graph = passes::replicate_micro_batches(std::move(model.graph), p.micro_batches);
  p.update.zero_stage = zero;
  p.degree = {o.dp, tp, o.sp, moe ? o.ep : 1};
  p.lower.claim_rule = lower::ClaimRule::kEveryAxisInDim;
  return p;
}

// One module from a sharding spreadsheet, over the given degrees.
Plan plan_csv(const Options& o) {
  Plan p;
  try {
    p.model = models::build_csv_model(o.module_csv);
  } catch (const graph::GraphError& e) {
    throw UsageError(std::string("--module_csv: ") + e.what());
  }
  require(o.pp == 1, "--pp " + num(o.pp) +
                         " needs a model with blocks: a --module_csv module runs on one stage "
                         "(use --pp 1)");
  const std::map<std::string, std::pair<const char*, std::optional<int64_t>>> dims = {
      {"Batch", {"--batch", o.batch}},
      {"MicroBatch", {"--micro_batch", o.micro_batch}},
      {"Seq", {"--seq", o.seq}},
      {"Dmodel", {"--dmodel", o.dmodel}},
      {"Dff", {"--dff", o.dff}},
      {"Head", {"--head", o.head}},
      {"KVHead", {"--kvhead", o.kvhead}},
      {"Din", {"--din", o.din}},
      {"Dout", {"--dout", o.dout}},
      {"Dvocal", {"--dvocal", o.dvocal}},
      {"Dvocab", {"--dvocal", o.dvocal}},
      {"Experts", {"--experts", o.experts}},
      {"KExperts", {"--kexperts", o.kexperts}}};
  const std::set<std::string> axes = {"dp", "tp", "sp", "cp", "ep", "pp", "fsdp", "gshard"};
  for (const std::string& symbol : models::csv_model_symbols(p.model)) {
    if (axes.count(symbol)) continue;
    auto it = dims.find(symbol);
    require(it != dims.end(), "--module_csv " + o.module_csv + " uses the symbol '" + symbol +
                                  "', which no flag sets: use Batch, Seq, Dmodel, Dff, Head, "
                                  "KVHead, Din, Dout, Dvocal, Experts or KExperts");
    require(it->second.second.has_value(),
            "--module_csv " + o.module_csv + " uses " + symbol + ": give " + it->second.first);
    bind_dims(p, {{symbol.c_str(), it->second.first, it->second.second, 1}});
  }
  bind_degree(p, "dp", "--dp", o.dp);
  bind_degree(p, "tp", "--tp", o.tp);
  bind_degree(p, "sp", "--sp", o.sp);
  bind_degree(p, "cp", "--sp", o.sp);
  bind_degree(p, "ep", "--ep", o.ep);
  bind_degree(p, "pp", "--pp", o.pp);
  const int zero = zero_stage(o);
  const expr::Expr dp = expr::Expr::symbol("dp"), one = expr::Expr::constant(1);
  p.model.graph.substitute({{"fsdp", zero == 3 ? dp : one}, {"gshard", zero >= 2 ? dp : one}});
  p.update.zero_stage = zero;
  bool has_ep = false;
  for (const auto& a : p.model.axes) has_ep |= a.axis == Axis::kEp;
  p.degree = {o.dp, o.tp, o.sp, has_ep ? o.ep : 1};
  p.lower.claim_rule = lower::ClaimRule::kEveryAxisInDim;
  return p;
}

// --ranks A-B (inclusive), or every rank.
std::pair<int64_t, int64_t> rank_range(const Options& o, int64_t num_ranks) {
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

}  // namespace

RunSummary generate(const Options& o) {
  check_degree("--dp", o.dp);
  check_degree("--tp", o.tp);
  check_degree("--sp", o.sp);
  check_degree("--pp", o.pp);
  check_degree("--ep", o.ep);
  const emit::Schema schema = parse_schema(o.chakra_schema_version);

  std::string output_name = o.output_name;
  if (output_name.find("%d") == std::string::npos) output_name += ".%d.et";
  try {
    io::check_rank_pattern(output_name);
  } catch (const io::OutputError& e) {
    throw UsageError("--output_name '" + o.output_name + "' " + e.what());
  }
  std::string comm_group_name;
  if (o.comm_group_file) {
    comm_group_name = *o.comm_group_file;
    require(!comm_group_name.empty(), "--comm_group_file must not be empty: give a file name");
  } else {
    // The later reference's rule: drop ".%d", turn ".et" into ".json".
    comm_group_name = output_name;
    auto replace_all = [&](const std::string& from, const std::string& to) {
      for (size_t at; (at = comm_group_name.find(from)) != std::string::npos;)
        comm_group_name.replace(at, from.size(), to);
    };
    replace_all(".%d", "");
    replace_all("%d", "");
    replace_all(".et", ".json");
    if (comm_group_name == output_name || comm_group_name.empty()) comm_group_name += ".json";
  }

  Plan p;
  if (!o.module_csv.empty()) {
    p = plan_csv(o);
  } else if (o.model_type == "transformer") {
    p = plan_transformer(o);
  } else if (o.model_type == "gpt" || o.model_type == "dense" || o.model_type == "llama" ||
             o.model_type == "moe") {
    p = plan_later(o);
  } else {
    throw UsageError("--model_type '" + o.model_type +
                     "' is unknown: use transformer, gpt (dense), llama or moe");
  }
  p.schema = schema;

  const int threads = o.threads > 0
                          ? o.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  p.lower.io.mixed_precision = o.mixed_precision.value_or(false);
  if (o.units == "physical") {
    p.lower.flops_per_mac = 2;
    p.lower.kernel_flops = true;
    p.lower.bytes_per_element = dtype_bytes(o.dtype);
  } else {
    require(o.units == "stg", "--units '" + o.units + "' is unknown: use stg or physical");
    require(o.dtype == "bf16", "--dtype applies to --units physical only: add --units physical");
  }
  try {
    p.lower.schedule = lower::parse_schedule(o.pipeline_schedule);
  } catch (const std::invalid_argument&) {
    throw UsageError("--pipeline_schedule '" + o.pipeline_schedule +
                     "' is unknown: use none, gpipe, 1f1b or interleaved");
  }
  p.lower.micro_batches = p.micro_batches;
  const int chunks = o.virtual_stages;
  require(chunks >= 1, "--virtual_stages " + std::to_string(chunks) + " is not valid: use >= 1");
  require(chunks == 1 || p.lower.schedule == lower::Schedule::kInterleaved,
          "--virtual_stages applies to --pipeline_schedule interleaved only: add it or drop "
          "--virtual_stages");
  require(chunks == 1 || o.pp * chunks <= p.model.num_blocks,
          "--pp " + std::to_string(o.pp) + " x --virtual_stages " + std::to_string(chunks) +
              " is larger than --num_stacks " + std::to_string(p.model.num_blocks) +
              ": every virtual stage needs at least one block");
  if (p.lower.schedule == lower::Schedule::kInterleaved)
    require(p.micro_batches % o.pp == 0,
            "--pipeline_schedule interleaved needs a number of micro-batches (--batch / "
            "--micro_batch = " +
                std::to_string(p.micro_batches) + ") divisible by --pp " + std::to_string(o.pp));
  std::vector<StageGraph> stages;
  try {
    if (o.activation_recompute.value_or(false)) passes::add_recomputation(p.model.graph);
    passes::add_weight_updates(p.model.graph, p.update);
    p.pipeline =
        passes::assign_stages(p.model.graph, static_cast<int>(o.pp), p.model.num_blocks, chunks);
    p.lower.active_axes.clear();
    for (const auto& a : p.model.axes)
      if (p.degree[static_cast<int>(a.axis)] > 1) p.lower.active_axes.push_back(a);
    // Stages are lowered concurrently; the graph is only read from here on.
    p.model.graph.evaluate_all();
    stages.resize(o.pp);
    io::parallel_for(0, o.pp, threads, [&](int64_t s) {
      stages[s] =
          lower::lower_stage(p.model.graph, p.pipeline, static_cast<int>(s), p.values, p.lower);
    });
  } catch (const lower::SizeError& e) {
    throw UsageError(e.what());
  }

  std::vector<Axis> axes;
  for (const auto& a : p.model.axes) axes.push_back(a.axis);
  const lower::RankLayout layout(o.pp, p.degree, axes);

  const auto [first_rank, last_rank] = rank_range(o, layout.num_ranks());
  io::OutputFiles files(o.output_dir);
  try {
    files.prepare();
  } catch (const io::OutputError& e) {
    throw UsageError(std::string("--output_dir: ") + e.what());
  }
  RunSummary summary;
  if (o.print_gpu_vram.value_or(false)) {
    report::MemoryOptions m;
    m.mixed_precision = p.lower.io.mixed_precision;
    m.zero_stage = p.update.zero_stage;
    m.dp = o.dp;
    m.schedule = p.lower.schedule;
    m.micro_batches = p.micro_batches;
    summary.memory_report = report::format_memory(
        report::memory_by_stage(p.model.graph, p.pipeline, p.values, m), layout.ranks_per_stage());
  }
  summary.ranks = layout.num_ranks();
  summary.comm_group_path = comm_group_name;
  const std::string groups = layout.comm_group_json();
  files.write(comm_group_name, groups);
  std::atomic<int64_t> bytes{static_cast<int64_t>(groups.size())}, nodes{0};
  // v0.0.4: each stage serialised once, ranks only splice in their values.
  std::vector<emit::StageTemplate> templates;
  if (p.schema == emit::Schema::kV004)
    for (const StageGraph& stage : stages) templates.emplace_back(stage);
  io::Progress progress(last_rank - first_rank + 1, "ranks");
  io::parallel_for(first_rank, last_rank + 1, threads, [&](int64_t rank) {
    const RankBinding binding = layout.binding(rank);
    const int stage_index = static_cast<int>(layout.coords_of(rank).stage);
    const StageGraph& stage = stages[stage_index];
    std::string content;
    if (templates.empty()) {
      emit::append_trace(content, stage, binding, p.schema);
    } else {
      templates[stage_index].append_rank(content, binding);
    }
    files.write(io::expand_rank(output_name, rank), content);
    bytes += static_cast<int64_t>(content.size());
    nodes += static_cast<int64_t>(stage.nodes.size());
    progress.advance(1, static_cast<int64_t>(content.size()));
  });
  files.commit();
  summary.files = last_rank - first_rank + 2;
  summary.bytes = bytes;
  summary.nodes = nodes;
  return summary;
}

}  // namespace stg
