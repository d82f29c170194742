#include "help_groups.h"

#include <string>
#include <string_view>

#include "stg/mesh/axes.h"
#include "stg/models/row_flag.h"

namespace cli {

namespace {

struct FlagHelp {
  std::string_view flag;
  const char* group;     // the docs section (docs/*.md) that describes the flag
  const char* fallback;  // what an unset flag means
};

constexpr const char* kOutput = "Output";
constexpr const char* kParallelism = "Parallelism";
constexpr const char* kModel = "Model (defaults: transformer / gpt, llama, moe)";
constexpr const char* kPresets = "Model presets and Hugging Face configs";
constexpr const char* kSchedules = "Pipeline schedules";
constexpr const char* kZero = "ZeRO stages";
constexpr const char* kUnits = "Physical units";
constexpr const char* kModules = "Custom modules";
constexpr const char* kMegatron = "Realistic training step (--framework megatron)";
constexpr const char* kAstraSim = "ASTRA-sim inputs";

constexpr FlagHelp kFlags[] = {
    {"--output_dir", kOutput, "."},
    {"--output_name", kOutput, "workload.%d.et"},
    {"--allow_any_name", kOutput, "off"},
    {"--comm_group_file", kOutput, "derived from --output_name: workload.json"},
    {"--chakra_schema_version", kOutput, "v0.0.4"},
    {"--trace_detail", kOutput, "full"},
    {"--threads", kOutput, "one per core"},
    {"--ranks", kOutput, "all ranks"},
    {"--shard", kOutput, "0/1: one shard"},
    {"--quiet", kOutput, "off"},
    {"--json", kOutput, "off"},
    {"--print_passes", kOutput, "off"},
    {"--dump_after", kOutput, "none"},
    {"--validate", kOutput, "off"},
    {"--print_step_figures", kOutput, "off"},
    {"--print_makespan", kOutput, "off"},
    {"--peak_tflops", kOutput, "989"},
    {"--mem_bw_gbps", kOutput, "3350"},
    {"--link_gbps", kOutput, "100"},
    {"--gpu", kAstraSim, "none: 989 TFLOPS, 3350 GB/s, 400 GB/s within nodes of 8, 50 across"},
    {"--compute_time", kAstraSim, "roofline"},
    {"--astra_sim", kAstraSim, "off"},
    {"--network_dims", kAstraSim, "one per parallel axis of degree > 1"},
    {"--weight_sharded", kParallelism, "0"},
    {"--cp_algo", kParallelism, "allgather"},
    {"--model_type", kModel, "transformer"},
    {"--num_stacks", kModel, "32 / 80"},
    {"--din", kModel, "51200 / refused"},
    {"--dout", kModel, "25600 / refused"},
    {"--dvocal", kModel, "refused / 32000"},
    {"--dmodel", kModel, "25600 / 8192"},
    {"--dff", kModel, "102400 / 28672"},
    {"--batch", kModel, "1024 / 64"},
    {"--micro_batch", kModel, "refused / --batch"},
    {"--seq", kModel, "1024"},
    {"--head", kModel, "1024 / 64"},
    {"--dense_blocks", kModel, "refused / 0"},
    {"--mtp_depth", kModel, "refused / 0"},
    {"--tpsp", kModel, "refused / 1"},
    {"--mixed_precision", kModel, "0"},
    {"--activation_recompute", kModel, "0"},
    {"--print_gpu_vram", kModel, "0"},
    {"--model", kPresets, "none"},
    {"--hf_config", kPresets, "none"},
    {"--pipeline_schedule", kSchedules, "none"},
    {"--virtual_stages", kSchedules, "1"},
    {"--pp_balance", kSchedules, "count"},
    {"--zero_stage", kZero, "0"},
    {"--units", kUnits, "stg; physical with --framework megatron"},
    {"--dtype", kUnits, "bf16"},
    {"--module_csv", kModules, "none"},
    {"--framework", kMegatron, "reference"},
    {"--tie_embeddings", kMegatron, "1 for gpt, 0 for llama and moe"},
    {"--causal_saving", kMegatron, "0"},
    {"--grad_dtype", kMegatron, "fp32"},
    {"--make_vocab_size_divisible_by", kMegatron, "128"},
};

}  // namespace

void apply_help_groups(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    const std::string name = opt->get_name();
    if (name == "--help" || name == "--version") continue;
    const FlagHelp* help = nullptr;
    for (const FlagHelp& f : kFlags)
      if (f.flag == name) help = &f;
    const FlagHelp axis{name, kParallelism, "1"};  // every axis flag (mesh/axes.h)
    for (const stg::mesh::AxisSpec& a : stg::mesh::kAxes)
      if (a.flag == name || a.spelling == name) help = &axis;
    FlagHelp row_flag{name, kModel, ""};  // every component row's flag (row_flag.h)
    for (const stg::models::RowFlag* f : stg::models::component_row_flags())
      if (f->flag == name) {
        row_flag.fallback = f->fallback;
        help = &row_flag;
      }
    if (!help) {
      opt->group("Other");
      continue;
    }
    opt->group(help->group);
    opt->description(opt->get_description() + " [default: " + help->fallback + "]");
  }
}

}  // namespace cli
