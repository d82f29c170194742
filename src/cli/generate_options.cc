#include "generate_options.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <tuple>

#include "flag_text.h"
#include "stg/emit/astra_sim_inputs.h"
#include "stg/frameworks/registry.h"
#include "stg/models/families/registry.h"
#include "stg/models/hf_config.h"
#include "stg/models/presets.h"
#include "stg/util/closest.h"

namespace cli {

namespace {

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

}  // namespace

bool parse_bool(const std::string& flag, const std::string& value) {
  const std::string text = lowercase(value);
  if (text == "1" || text == "true" || text == "t" || text == "yes" || text == "y") return true;
  if (text == "0" || text == "false" || text == "f" || text == "no" || text == "n") return false;
  throw stg::UsageError(flag + " '" + text + "' is not a boolean: use 0/1, true/false or yes/no");
}

namespace {

// The flags of one word (a switch or a choice); an empty one keeps the default.
void apply_words(const GenerateFlags& f, stg::Options& o) {
  if (!f.weight_sharded.empty())
    o.weight_sharded = parse_bool("--weight_sharded", f.weight_sharded);
  if (!f.tpsp.empty()) o.tpsp = parse_bool("--tpsp", f.tpsp);
  if (!f.recompute.empty()) o.activation_recompute = parse_recompute(lowercase(f.recompute));
  if (!f.mixed.empty()) o.mixed_precision = parse_bool("--mixed_precision", f.mixed);
  if (!f.vram.empty()) o.print_gpu_vram = parse_bool("--print_gpu_vram", f.vram);
  if (!f.model_type.empty()) o.model = stg::models::find_family(f.model_type).name;
  if (!f.schema.empty()) o.schema = parse_schema(f.schema);
  if (!f.trace_detail.empty()) o.trace_detail = parse_trace_detail(f.trace_detail);
  if (!f.schedule.empty()) o.pipeline_schedule = parse_schedule(f.schedule);
  if (!f.units.empty()) o.units = parse_units(f.units);
  if (!f.dtype.empty()) o.dtype = parse_dtype(f.dtype);
  if (!f.framework.empty()) o.framework = stg::frameworks::find(f.framework).name();
  if (!f.tie_embeddings.empty())
    o.tie_embeddings = parse_bool("--tie_embeddings", f.tie_embeddings);
  if (!f.cp_algo.empty()) o.cp_algo = parse_cp_algo(lowercase(f.cp_algo));
  if (!f.causal_saving.empty()) o.causal_saving = parse_bool("--causal_saving", f.causal_saving);
  if (!f.pp_balance.empty()) {
    const std::string balance = lowercase(f.pp_balance);
    if (balance != "count" && balance != "cost")
      throw stg::UsageError("--pp_balance '" + f.pp_balance + "' is unknown: use count or cost");
    o.pp_balance_cost = balance == "cost";
  }
  if (!f.grad_dtype.empty()) {
    try {
      o.grad_dtype = parse_dtype(f.grad_dtype);
    } catch (const stg::UsageError&) {  // --dtype's message would name fp16 and fp8
      throw stg::UsageError("--grad_dtype '" + f.grad_dtype + "' is unknown: use fp32 or bf16");
    }
  }
}

// --model NAME: the preset's values; an unknown name with the closest known.
void apply_preset(const std::string& name, stg::Options& o) {
  const stg::models::Preset* p = stg::models::find_preset(name);
  if (!p) {
    std::vector<std::string> known;
    for (const stg::models::Preset& k : stg::models::presets()) known.push_back(k.name);
    const std::string close = stg::util::closest(name, known);
    throw stg::UsageError("--model '" + name +
                          "' is unknown: " + (close.empty() ? "" : "did you mean " + close + "? ") +
                          "run `stg models` for the list");
  }
  stg::models::apply_preset(*p, o);
}

// An axis given by both its spellings (--sp and --cp) must agree.
void apply_axis_spellings(const GenerateFlags& f, stg::Options& o) {
  for (int r = 0; r < stg::mesh::kNumAxes; ++r) {
    const stg::mesh::AxisSpec& a = stg::mesh::kAxes[r];
    const std::optional<int64_t>&given = f.axis_flag[r], &other = f.axis_spelling[r];
    if (given && other && *given != *other)
      throw stg::UsageError(std::string(a.flag) + " " + std::to_string(*given) + " and " +
                            a.spelling + " " + std::to_string(*other) +
                            " are two spellings of one degree: give one of them");
    if (given) o.degree.row(r) = *given;
    if (other && *other < 1)  // named as given (the degree check names the row's flag)
      throw stg::UsageError(std::string(a.spelling) + " " + std::to_string(*other) +
                            " is not a valid degree: use a whole number >= 1");
    if (other) o.degree.row(r) = *other;
  }
}

// --gpu NAME: the row, and under stg infer the memory limit and the
// phases' roofline that no flag gave.
void apply_gpu(const GenerateFlags& f, stg::Options& o) {
  o.gpu = stg::hardware::find_gpu(f.gpu);
  if (!o.gpu) {
    std::vector<std::string> known;
    for (const stg::hardware::Gpu& g : stg::hardware::gpus()) known.push_back(g.name);
    // A prefix ("h100" of "h100-sxm") before the closest spelling.
    std::string close = stg::util::closest(f.gpu, known);
    for (const std::string& k : known)
      if (k.rfind(lowercase(f.gpu), 0) == 0) close = k;
    throw stg::UsageError("--gpu '" + f.gpu +
                          "' is unknown: " + (close.empty() ? "" : "did you mean " + close + "? ") +
                          "use one of " + stg::hardware::gpu_names());
  }
  const stg::emit::AstraSimMachine m = stg::emit::machine_of(o);  // refuses fp8 without it
  if (!o.serving) return;
  if (!f.hbm_given) o.serving->hbm_gb = o.gpu->hbm_gb;
  if (!f.peak_given) o.serving->roofline.peak_tflops = m.peak_tflops;
  if (!f.mem_bw_given) o.serving->roofline.mem_bw_gbps = m.hbm_gbps;
}

// --compute_time roofline|model (stg::Options::ComputeTime).
stg::Options::ComputeTime parse_compute_time(const std::string& value) {
  const std::string text = lowercase(value);
  if (text == "roofline") return stg::Options::ComputeTime::kRoofline;
  if (text == "model") return stg::Options::ComputeTime::kModel;
  throw stg::UsageError("--compute_time '" + value + "' is unknown: use roofline or model");
}

}  // namespace

std::vector<std::string> apply_text_flags(GenerateFlags& f) {
  stg::Options& o = f.options;
  for (const auto& [flag, value] : f.component_flags)
    if (value) o.component_flags[flag] = *value;
  apply_words(f, o);
  apply_axis_spellings(f, o);
  if (!f.astra_sim_dir.empty()) {
    // --astra_sim DIR is where the traces go: another --output_dir contradicts it.
    if (o.output_dir != "." && o.output_dir != f.astra_sim_dir)
      throw stg::UsageError("--astra_sim " + f.astra_sim_dir +
                            " writes the traces there, not to "
                            "--output_dir " +
                            o.output_dir + ": give only one of them");
    o.output_dir = f.astra_sim_dir;
    o.astra_sim = true;
  }
  if (!f.shard.empty())
    std::tie(o.shard_index, o.shard_count) = parse_shard(
        f.shard, [](const char* name) { return static_cast<const char*>(std::getenv(name)); });
  if (!f.compute_time.empty()) o.compute_time = parse_compute_time(f.compute_time);
  if (!f.gpu.empty()) apply_gpu(f, o);
  if (!f.preset.empty() && !f.hf_config.empty())
    throw stg::UsageError("--model and --hf_config both choose the model: give only one");
  if (!f.preset.empty()) apply_preset(f.preset, o);
  if (!f.hf_config.empty()) return stg::models::apply_hf_config(f.hf_config, o);
  return {};
}

}  // namespace cli
