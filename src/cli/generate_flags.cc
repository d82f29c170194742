#include "generate_flags.h"

#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "command_line.h"
#include "help_groups.h"
#include "stg/lower/schedule_row.h"
#include "stg/mesh/axes.h"
#include "stg/models/families/registry.h"
#include "stg/models/parts/context_parallel.h"
#include "stg/models/registry.h"
#include "stg/models/row_flag.h"

// The flags are added in groups, in the order --help lists them within their
// docs groups (help_groups.cc) and the order unknown-flag suggestions try
// them: keep it.
namespace cli {

namespace {

void describe_command(CLI::App& app) {
  app.footer(
      "Subcommands:\n"
      "  stg models            list the model presets (--model NAME)\n"
      "  stg validate DIR      check a trace directory against the simulator's rules\n"
      "  stg inspect DIR       summarise a trace directory (--json); --schedule NAME draws "
      "a schedule\n"
      "  stg dot DIR --rank R  one rank's trace as a Graphviz graph\n"
      "  stg plans --gpus N    every parallel plan of the model on N GPUs, its memory, FLOPs and "
      "traffic\n"
      "  stg infer ...         one serving iteration (prefill, decode steps with a KV cache; "
      "--requests, --prompt_len, --decode_steps)\n"
      "Choices: --model_type " +
      stg::models::family_names() + "; --pipeline_schedule " + stg::lower::schedule_names() +
      "; --units stg or physical; --chakra_schema_version v0.0.4, v0.0.1 or json. docs/flags.md "
      "has every flag and default.");
  app.get_formatter()->column_width(34);
  // As with the reference's argparse, a repeated flag takes its last value.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

void add_output_flags(CLI::App& app, GenerateFlags& f) {
  stg::Options& o = f.options;
  app.add_option("--output_dir", o.output_dir, "directory for the traces and the comm-group file");
  app.add_option("--output_name", o.output_name, "trace file name, %d = rank");
  app.add_flag("--allow_any_name", o.allow_any_name,
               "keep an --output_name that ASTRA-sim cannot open as PREFIX.<rank>.et");
  app.add_option("--comm_group_file", o.comm_group_file,
                 "comm-group file name inside --output_dir");
  app.add_option("--chakra_schema_version", f.schema, "v0.0.4, v0.0.1 or json");
  app.add_option("--trace_detail", f.trace_detail,
                 "full, or sim: only what a simulator reads, short names");
  app.add_option("--astra_sim", f.astra_sim_dir,
                 "DIR: write the traces into DIR with ASTRA-sim's network, system and "
                 "remote-memory configurations and run.sh (H100-like defaults)");
  app.add_option("--network_dims", o.network_dims,
                 "--astra_sim network dimensions, e.g. 2,4: whole numbers >= 2 whose product is "
                 "the rank count, at least two of them unless the rank count is prime");
}

// What an integer flag accepts, for its messages.
const char* const kAtLeastOne = "an integer >= 1";
// No bound but the field's type: sizes that overflow are refused by the
// library, naming the flags.
constexpr int64_t kNoBound = std::numeric_limits<int64_t>::max();

void add_parallel_flags(CLI::App& app, GenerateFlags& f) {
  for (int r = 0; r < stg::mesh::kNumAxes; ++r) {  // one flag per axis (mesh/axes.h)
    const stg::mesh::AxisSpec& a = stg::mesh::kAxes[r];
    const std::string alias = *a.alias ? std::string(",") + a.alias : "";
    const std::string valid = "an integer from 1 to " + std::to_string(stg::kMaxRanks);
    if (!*a.spelling) {
      f.integers.add(app, a.flag + alias, f.options.degree.row(r), a.help, stg::kMaxRanks, valid);
      continue;
    }
    f.integers.add(app, a.flag + alias, f.axis_flag[r], a.help, stg::kMaxRanks, valid);
    f.integers.add(app, a.spelling, f.axis_spelling[r],
                   std::string("the same degree as ") + a.flag + " (give one of them)",
                   stg::kMaxRanks, valid);
  }
  app.add_option("--cp_algo", f.cp_algo,
                 stg::models::cp_algo_names() +
                     ": how attention crosses the context-parallel axis (gpt, llama, moe)");
  app.add_option("--weight_sharded", f.weight_sharded, "FSDP: shard weights over dp (0/1)");
}

// The component rows' flags (models/row_flag.h) that --help lists after
// `after` (null: after the model's other flags), each followed by those
// listed after it.
void add_row_flags(CLI::App& app, GenerateFlags& f, const char* after) {
  for (const stg::models::RowFlag* flag : stg::models::component_row_flags()) {
    const bool here = after && flag->listed_after ? std::strcmp(after, flag->listed_after) == 0
                                                  : after == flag->listed_after;
    if (!here) continue;
    const std::string valid = "an integer >= " + std::to_string(flag->least);
    f.integers.add(app, flag->flag, f.component_flags[flag->flag], flag->help, kNoBound, valid,
                   flag->command_line_least ? std::optional<int64_t>(flag->least) : std::nullopt);
    add_row_flags(app, f, flag->flag);
  }
}

void add_model_flags(CLI::App& app, GenerateFlags& f) {
  stg::Options& o = f.options;
  app.add_option("--model_type", f.model_type, stg::models::family_names());
  f.integers.add(app, "--din", o.din, "input embedding size (transformer)", kNoBound, kAtLeastOne);
  f.integers.add(app, "--dout", o.dout, "output embedding size (transformer)", kNoBound,
                 kAtLeastOne);
  f.integers.add(app, "--dvocal", o.dvocal, "vocabulary size (gpt, llama, moe)", kNoBound,
                 kAtLeastOne);
  f.integers.add(app, "--dmodel", o.dmodel, "model (hidden) size", kNoBound, kAtLeastOne);
  f.integers.add(app, "--dff", o.dff, "feed-forward size", kNoBound, kAtLeastOne);
  f.integers.add(app, "--batch", o.batch, "global batch size", kNoBound, kAtLeastOne);
  f.integers.add(app, "--micro_batch", o.micro_batch,
                 "global micro-batch size in sequences, over all dp ranks (gpt, llama, moe; "
                 "-1: --batch, no micro-batching): batch = micro_batch x number of "
                 "micro-batches, and each dp rank runs micro_batch/dp sequences per micro-batch "
                 "(Megatron's micro-batch size x dp)",
                 kNoBound, "an integer >= 1, or -1 for no micro-batching");
  f.integers.add(app, "--seq", o.seq, "sequence length", kNoBound, kAtLeastOne);
  f.integers.add(app, "--head", o.head, "attention heads", kNoBound, kAtLeastOne);
  add_row_flags(app, f, "--head");
  f.integers.add(app, "--num_stacks", o.num_stacks, "transformer blocks", stg::kMaxStacks,
                 "an integer from 1 to " + std::to_string(stg::kMaxStacks));
  add_row_flags(app, f, "--num_stacks");
  f.integers.add(app, "--dense_blocks", o.dense_blocks,
                 "the first k blocks dense, the rest MoE (MoE families)", stg::kMaxStacks,
                 "an integer from 0 to " + std::to_string(stg::kMaxStacks));
  add_row_flags(app, f, "--dense_blocks");
  f.integers.add(app, "--mtp_depth", o.mtp_depth,
                 "multi-token prediction modules after the last block, each predicting one token "
                 "further (decoder models; DeepSeek-V3: 1)",
                 stg::kMaxStacks, "an integer from 0 to " + std::to_string(stg::kMaxStacks), 0);
  add_row_flags(app, f, nullptr);
  app.add_option("--tpsp", f.tpsp, "tensor + sequence parallel layouts (0/1)");
  app.add_option("--activation_recompute", f.recompute,
                 "0/none, 1/full: recompute each block's forward before its backward, or "
                 "selective: only the attention core (--framework megatron)");
  app.add_option("--mixed_precision", f.mixed, "mixed-precision memory accounting (0/1)");
  app.add_option("--print_gpu_vram", f.vram, "print the per-rank memory footprint (0/1)");
}

void add_schedule_flags(CLI::App& app, GenerateFlags& f) {
  app.add_option("--pipeline_schedule", f.schedule,
                 stg::lower::schedule_help() + " (docs/pipeline_schedules.md)");
  f.integers.add(app, "--virtual_stages", f.options.virtual_stages,
                 "layer chunks per stage (interleaved)", stg::kMaxStacks,
                 "an integer from 1 to " + std::to_string(stg::kMaxStacks));
  app.add_option("--pp_balance", f.pp_balance,
                 "count (blocks split evenly over the stages) or cost (split by their FLOPs, "
                 "the ends included)");
  f.integers.add(app, "--zero_stage", f.options.zero_stage,
                 "ZeRO stage 0-3 (3 = --weight_sharded 1)", 3, "an integer from 0 to 3");
}

void add_framework_flags(CLI::App& app, GenerateFlags& f) {
  app.add_option("--framework", f.framework,
                 "reference (the reference generator's numbers) or megatron: the step as "
                 "Megatron-LM runs it (implies --units physical, bf16; docs/megatron.md)");
  app.add_option("--tie_embeddings", f.tie_embeddings,
                 "megatron: input and output embedding share one weight (0/1)");
  app.add_option("--causal_saving", f.causal_saving,
                 "megatron: charge attention for the causal half only (0/1)");
  app.add_option("--grad_dtype", f.grad_dtype,
                 "megatron: gradient element type for accumulation and reduction (fp32 or bf16)");
  f.integers.add(app, "--make_vocab_size_divisible_by", f.options.make_vocab_size_divisible_by,
                 "megatron: pad the vocabulary to a multiple of this x tp (1: none)", kNoBound,
                 kAtLeastOne);
  app.add_option("--units", f.units, "stg (elements, MACs) or physical (bytes, FLOPs)");
  app.add_option("--dtype", f.dtype,
                 "fp32, bf16, fp16 or fp8: bytes per element (--units physical)");
}

// Which ranks to write, with how many threads, and what to print or check.
void add_run_flags(CLI::App& app, GenerateFlags& f) {
  stg::Options& o = f.options;
  app.add_option("--ranks", o.ranks,
                 "A-B: write only ranks A..B, or a list A-B,C,D-E (same bytes as a full run; the "
                 "comm-group file too)");
  app.add_option("--shard", f.shard,
                 "i/n: write the i-th of n contiguous rank ranges (shard 0 also writes the "
                 "comm-group file); auto: i and n from mpirun, PMI or Slurm");
  f.integers.add(
      app, "--threads", o.threads, "writer threads", stg::kMaxThreads,
      "an integer up to " + std::to_string(stg::kMaxThreads) + " (0 or less: one per core)");
  app.add_flag("--quiet", f.quiet, "print nothing on success");
  app.add_flag("--json", f.json,
               "print the result as JSON (what the Python module's call returns) instead of "
               "text");
  app.add_flag("--print_passes", f.print_passes,
               "print the pass pipeline of this run and exit (writes nothing)");
  app.add_flag("--print_step_figures", f.print_step_figures,
               "after the run, print FLOPs per rank and bytes per parallel axis per rank "
               "(as `stg inspect` does)");
  app.add_flag("--print_makespan", f.print_makespan,
               "after the run, replay one rank per pipeline stage with time (as `stg validate "
               "--replay` times all ranks) and print the step's makespan and each stage's compute "
               "idle time (the bubble)");
  app.add_option("--peak_tflops", f.peak_tflops,
                 "with --print_makespan: ASTRA-sim's \"peak-perf\" in TFLOPS")
      ->check(kPositive);
  app.add_option("--mem_bw_gbps", f.mem_bw_gbps,
                 "with --print_makespan: ASTRA-sim's \"local-mem-bw\" in GB/s")
      ->check(kPositive);
  app.add_option("--gpu", f.gpu,
                 "the GPU's datasheet figures: " + stg::hardware::gpu_names() +
                     " (roofline peak and HBM bandwidth, stg infer's --hbm_gb, --astra_sim's "
                     "network; docs/gpus.md); explicit flags win");
  app.add_option("--compute_time", f.compute_time,
                 "roofline (compute nodes timed at the roofline of their FLOPs and bytes) or "
                 "model: each also carries duration_micros from the kernel model (GEMM tiles and "
                 "waves over the SMs, flash attention, memory-bound kernels; docs/"
                 "kernel-model.md) on --gpu's figures, h100-sxm without --gpu; --astra_sim's "
                 "system file then turns the roofline off");
  app.add_option("--link_gbps", f.link_gbps,
                 "with --print_makespan: GB/s per message, a send or collective taking comm_size "
                 "/ link_gbps")
      ->check(kPositive);
  app.add_option("--dump_after", o.dump_after,
                 "write the graph after pass PASS as <output_dir>/PASS.csv (--module_csv format)");
  app.add_flag("--validate", f.validate, "validate the output (stg validate) after writing it");
}

// Where the model comes from besides its flags.
void add_source_flags(CLI::App& app, GenerateFlags& f) {
  app.add_option("--module_csv", f.options.module_csv,
                 "generate one module from a sharding spreadsheet (reference CSV format)");
  app.add_option("--model", f.preset,
                 "model preset (see `stg models`); explicit flags override it");
  app.add_option("--hf_config", f.hf_config,
                 "Hugging Face config.json to take the model from; explicit flags override it");
}

}  // namespace

void add_generate_flags(CLI::App& app, GenerateFlags& flags) {
  describe_command(app);
  add_output_flags(app, flags);
  add_parallel_flags(app, flags);
  add_model_flags(app, flags);
  add_schedule_flags(app, flags);
  add_framework_flags(app, flags);
  add_run_flags(app, flags);
  add_source_flags(app, flags);
  app.add_flag("--version", flags.version,
               "print the version and the Chakra schemas written, and exit");
  apply_help_groups(app);
}

}  // namespace cli
