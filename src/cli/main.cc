// The `stg` command: the seed generator's command line, unchanged.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "help_groups.h"
#include "inspect_command.h"
#include "progress_bar.h"
#include "stg/frameworks/registry.h"
#include "stg/generate.h"
#include "stg/io/cancel.h"
#include "stg/io/output_files.h"
#include "stg/models/families/registry.h"
#include "stg/models/hf_config.h"
#include "stg/models/presets.h"
#include "stg/models/registry.h"
#include "stg/report/step_figures.h"
#include "stg/util/closest.h"
#include "validate_command.h"

namespace {

// 0/1/true/false/yes/no (and t/f/y/n), any case.
bool parse_bool(const std::string& flag, std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (text == "1" || text == "true" || text == "t" || text == "yes" || text == "y") return true;
  if (text == "0" || text == "false" || text == "f" || text == "no" || text == "n") return false;
  throw stg::UsageError(flag + " '" + text + "' is not a boolean: use 0/1, true/false or yes/no");
}

int fail(const std::string& message) {
  std::fprintf(stderr, "stg: error: %s\n", message.c_str());
  return 2;
}

// CLI11's "Could not convert" for a flag that takes a whole number, in the
// flag's words: "--dp 2.5 is not a whole number: use an integer >= 1".
std::string not_a_whole_number(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_type_name() != "INT" || opt->count() == 0) continue;
    const std::string text = opt->results().back();
    size_t used = 0;
    try {
      std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == text.size() && !text.empty()) continue;
    const std::string name = opt->get_name();
    std::string valid = "an integer >= 1";
    if (name == "--threads") valid = "an integer (0 or less: one per core)";
    if (name == "--zero_stage") valid = "an integer from 0 to 3";
    if (name == "--micro_batch") valid = "an integer >= 1, or -1 for no micro-batching";
    return name + " " + text + " is not a whole number: use " + valid;
  }
  return "";
}

void note(const std::string& message) { std::fprintf(stderr, "stg: note: %s\n", message.c_str()); }

extern "C" void on_stop_signal(int signal) { stg::io::request_stop(signal); }

// While a run is generated, SIGINT, SIGTERM and SIGHUP only ask it to stop
// (the library then removes its staging directory and throws
// io::Interrupted), and SIGXFSZ is ignored, so that a file-size limit is a
// write error (EFBIG) rather than a kill. A signal the shell made us ignore
// (nohup, background jobs) stays ignored. The handlers go when the run ends.
class StopSignals {
 public:
  StopSignals() {
    std::signal(SIGXFSZ, SIG_IGN);
    struct sigaction ask = {};
    ask.sa_handler = on_stop_signal;
    sigemptyset(&ask.sa_mask);
    ask.sa_flags = SA_RESTART;
    for (size_t i = 0; i < kCount; ++i) {
      sigaction(kSignals[i], nullptr, &old_[i]);
      if (old_[i].sa_handler != SIG_IGN) sigaction(kSignals[i], &ask, nullptr);
    }
  }
  ~StopSignals() {
    for (size_t i = 0; i < kCount; ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
  static constexpr size_t kCount = sizeof(kSignals) / sizeof(kSignals[0]);
  struct sigaction old_[kCount] = {};
};

}  // namespace

// `stg validate DIR`, `stg inspect DIR`, `stg models`, `stg generate ...`;
// anything else is the generator's own command line.
int dispatch(int argc, char** argv, int (*generate_main)(int, char**)) {
  const std::string command = argc > 1 ? argv[1] : "";
  const std::vector<std::string> rest(argv + std::min(argc, 2), argv + argc);
  if (command == "validate") return cli::validate_main(rest);
  if (command == "inspect") return cli::inspect_main(rest);
  if (command == "models") {
    std::fputs(stg::models::models_table().c_str(), stdout);
    return 0;
  }
  if (command == "generate") {
    argv[1] = argv[0];
    return generate_main(argc - 1, argv + 1);
  }
  return generate_main(argc, argv);
}

int generate_main(int argc, char** argv) {
  stg::Options o;
  CLI::App app{"stg: synthetic distributed-training workloads as Chakra execution traces"};
  app.footer(
      "Subcommands:\n"
      "  stg models            list the model presets (--model NAME)\n"
      "  stg validate DIR      check a trace directory against the simulator's rules\n"
      "  stg inspect DIR       summarise a trace directory (--json)\n"
      "Choices: --model_type " +
      stg::models::family_names() +
      "; --pipeline_schedule none, gpipe, 1f1b or interleaved; --units stg or physical; "
      "--chakra_schema_version v0.0.4, v0.0.1 or json. README.md has every flag and default.");
  app.get_formatter()->column_width(34);
  // As with the reference's argparse, a repeated flag takes its last value.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::string weight_sharded, tpsp, recompute, mixed, vram;
  std::string model_type, schema, schedule, units, dtype;
  std::string trace_detail;
  bool quiet = false;
  bool validate = false;
  bool print_passes = false;
  bool print_step_figures = false;
  std::string preset, hf_config;

  app.add_option("--output_dir", o.output_dir, "directory for the traces and the comm-group file");
  app.add_option("--output_name", o.output_name, "trace file name, %d = rank");
  app.add_flag("--allow_any_name", o.allow_any_name,
               "keep an --output_name that ASTRA-sim cannot open as PREFIX.<rank>.et");
  app.add_option("--comm_group_file", o.comm_group_file,
                 "comm-group file name inside --output_dir");
  app.add_option("--chakra_schema_version", schema, "v0.0.4, v0.0.1 or json");
  app.add_option("--trace_detail", trace_detail,
                 "full, or sim: only what a simulator reads, short names");
  for (int r = 0; r < stg::mesh::kNumAxes; ++r) {  // one flag per axis (mesh/axes.h)
    const stg::mesh::AxisSpec& a = stg::mesh::kAxes[r];
    const std::string alias = *a.alias ? std::string(",") + a.alias : "";
    app.add_option(a.flag + alias, o.degree.row(r), a.help);
  }
  app.add_option("--weight_sharded", weight_sharded, "FSDP: shard weights over dp (0/1)");
  app.add_option("--model_type", model_type, stg::models::family_names());
  app.add_option("--din", o.din, "input embedding size (transformer)");
  app.add_option("--dout", o.dout, "output embedding size (transformer)");
  app.add_option("--dvocal", o.dvocal, "vocabulary size (gpt, llama, moe)");
  app.add_option("--dmodel", o.dmodel, "model (hidden) size");
  app.add_option("--dff", o.dff, "feed-forward size");
  app.add_option("--batch", o.batch, "global batch size");
  app.add_option("--micro_batch", o.micro_batch,
                 "global micro-batch size in sequences, over all dp ranks (gpt, llama, moe; "
                 "-1: --batch, no micro-batching): batch = micro_batch x number of "
                 "micro-batches, and each dp rank runs micro_batch/dp sequences per micro-batch "
                 "(Megatron's micro-batch size x dp)");
  app.add_option("--seq", o.seq, "sequence length");
  app.add_option("--head", o.head, "attention heads");
  app.add_option("--kvhead", o.kvhead, "key/value heads (llama, moe)");
  app.add_option("--num_stacks", o.num_stacks, "transformer blocks");
  app.add_option("--experts", o.experts, "experts per MoE layer");
  app.add_option("--kexperts", o.kexperts, "experts chosen per token");
  app.add_option("--tpsp", tpsp, "tensor + sequence parallel layouts (0/1)");
  app.add_option("--activation_recompute", recompute,
                 "0/none, 1/full: recompute each block's forward before its backward, or "
                 "selective: only the attention core (--framework megatron)");
  app.add_option("--mixed_precision", mixed, "mixed-precision memory accounting (0/1)");
  app.add_option("--print_gpu_vram", vram, "print the per-rank memory footprint (0/1)");
  app.add_option("--pipeline_schedule", schedule,
                 "none (order left to the simulator), gpipe, 1f1b or interleaved");
  app.add_option("--virtual_stages", o.virtual_stages, "layer chunks per stage (interleaved)");
  app.add_option("--zero_stage", o.zero_stage, "ZeRO stage 0-3 (3 = --weight_sharded 1)");
  std::string framework, tie_embeddings, causal_saving, grad_dtype;
  app.add_option("--framework", framework,
                 "reference (the reference generator's numbers) or megatron: the step as "
                 "Megatron-LM runs it (implies --units physical, bf16; README \"Realistic "
                 "training step\")");
  app.add_option("--tie_embeddings", tie_embeddings,
                 "megatron: input and output embedding share one weight (0/1)");
  app.add_option("--causal_saving", causal_saving,
                 "megatron: charge attention for the causal half only (0/1)");
  app.add_option("--grad_dtype", grad_dtype,
                 "megatron: gradient element type for accumulation and reduction (fp32 or bf16)");
  app.add_option("--make_vocab_size_divisible_by", o.make_vocab_size_divisible_by,
                 "megatron: pad the vocabulary to a multiple of this x tp (1: none)");
  app.add_option("--units", units, "stg (elements, MACs) or physical (bytes, FLOPs)");
  app.add_option("--dtype", dtype, "fp32, bf16, fp16 or fp8: bytes per element (--units physical)");
  app.add_option("--ranks", o.ranks,
                 "A-B: write only ranks A..B (same bytes as a full run; the comm-group file too)");
  std::string shard;
  app.add_option("--shard", shard,
                 "i/n: write the i-th of n contiguous rank ranges (shard 0 also writes the "
                 "comm-group file); auto: i and n from mpirun, PMI or Slurm");
  app.add_option("--threads", o.threads, "writer threads");
  app.add_flag("--quiet", quiet, "print nothing on success");
  app.add_flag("--print_passes", print_passes,
               "print the pass pipeline of this run and exit (writes nothing)");
  app.add_flag("--print_step_figures", print_step_figures,
               "after the run, print FLOPs per rank and bytes per parallel axis per rank "
               "(as `stg inspect` does)");
  app.add_option("--dump_after", o.dump_after,
                 "write the graph after pass PASS as <output_dir>/PASS.csv (--module_csv format)");
  app.add_flag("--validate", validate, "validate the output (stg validate) after writing it");
  app.add_option("--module_csv", o.module_csv,
                 "generate one module from a sharding spreadsheet (reference CSV format)");
  app.add_option("--model", preset, "model preset (see `stg models`); explicit flags override it");
  app.add_option("--hf_config", hf_config,
                 "Hugging Face config.json to take the model from; explicit flags override it");

  bool version = false;
  app.add_flag("--version", version, "print the version and the Chakra schemas written, and exit");

  cli::apply_help_groups(app);

  // An unknown flag is named, with the closest known one.
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options())
    for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || arg == "--") continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    const std::string close = stg::util::closest(name, names);
    return fail("unknown flag " + name + (close.empty() ? "" : ": did you mean " + close + "?") +
                " (see stg --help)");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ConversionError& e) {
    const std::string message = not_a_whole_number(app);
    if (!message.empty()) return fail(message);
    return fail(std::string(e.what()) + " (see stg --help)");
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    return fail(what + " (see stg --help)");
  }

  if (version) {
    std::printf("stg %s (Chakra schemas: v0.0.4, v0.0.1, json)\n", STG_VERSION);
    return 0;
  }
  try {
    if (!weight_sharded.empty()) o.weight_sharded = parse_bool("--weight_sharded", weight_sharded);
    if (!tpsp.empty()) o.tpsp = parse_bool("--tpsp", tpsp);
    if (!recompute.empty()) {
      std::string lower = recompute;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      o.activation_recompute = stg::parse_recompute(lower);
    }
    if (!mixed.empty()) o.mixed_precision = parse_bool("--mixed_precision", mixed);
    if (!vram.empty()) o.print_gpu_vram = parse_bool("--print_gpu_vram", vram);
    if (!model_type.empty()) o.model = stg::models::find_family(model_type).name;
    if (!schema.empty()) o.schema = stg::parse_schema(schema);
    if (!trace_detail.empty()) o.trace_detail = stg::parse_trace_detail(trace_detail);
    if (!schedule.empty()) o.pipeline_schedule = stg::parse_schedule(schedule);
    if (!units.empty()) o.units = stg::parse_units(units);
    if (!dtype.empty()) o.dtype = stg::parse_dtype(dtype);
    if (!framework.empty()) o.framework = stg::frameworks::find(framework).name();
    if (!tie_embeddings.empty()) o.tie_embeddings = parse_bool("--tie_embeddings", tie_embeddings);
    if (!causal_saving.empty()) o.causal_saving = parse_bool("--causal_saving", causal_saving);
    if (!grad_dtype.empty()) {
      try {
        o.grad_dtype = stg::parse_dtype(grad_dtype);
      } catch (const stg::UsageError&) {
        throw stg::UsageError("--grad_dtype '" + grad_dtype + "' is unknown: use fp32 or bf16");
      }
    }
    if (!shard.empty())
      std::tie(o.shard_index, o.shard_count) = stg::parse_shard(
          shard, [](const char* name) { return static_cast<const char*>(std::getenv(name)); });
    if (!preset.empty() && !hf_config.empty())
      throw stg::UsageError("--model and --hf_config both choose the model: give only one");
    if (!preset.empty()) {
      const stg::models::Preset* p = stg::models::find_preset(preset);
      if (!p) {
        std::vector<std::string> known;
        for (const stg::models::Preset& k : stg::models::presets()) known.push_back(k.name);
        const std::string close = stg::util::closest(preset, known);
        throw stg::UsageError("--model '" + preset + "' is unknown: " +
                              (close.empty() ? "" : "did you mean " + close + "? ") +
                              "run `stg models` for the list");
      }
      stg::models::apply_preset(*p, o);
    }
    if (!hf_config.empty())
      for (const std::string& n : stg::models::apply_hf_config(hf_config, o)) note(n);
    if (print_passes) {
      const stg::models::Workload w = stg::models::build_workload(o);
      std::fputs(stg::build_pipeline(o, w).print().c_str(), stdout);
      return 0;
    }
    const auto start = std::chrono::steady_clock::now();
    stg::RunSummary s;
    {
      const StopSignals stop_signals;
      std::optional<cli::ProgressBar> bar;
      if (!quiet) bar.emplace();
      s = stg::generate(o, bar ? &*bar : nullptr);
    }
    // A signal that came while the files were being moved into place: the
    // run is complete, but the caller asked us to stop.
    if (const int sig = stg::io::stop_signal.load()) {
      std::fprintf(stderr, "stg: error: interrupted by %s after the run was complete in %s\n",
                   stg::io::signal_name(sig).c_str(), o.output_dir.c_str());
      return 128 + sig;
    }
    for (const std::string& n : s.notes) note(n);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!s.memory_report.empty()) std::fputs(s.memory_report.c_str(), stdout);
    if (print_step_figures) std::fputs(stg::report::format_step_figures(s.step).c_str(), stdout);
    if (!quiet)
      std::printf("stg: %lld ranks, %lld files, %lld bytes, %lld nodes in %.3f s -> %s\n",
                  static_cast<long long>(s.ranks), static_cast<long long>(s.files),
                  static_cast<long long>(s.bytes), static_cast<long long>(s.nodes), seconds,
                  o.output_dir.c_str());
    if (validate) return cli::validate_main({o.output_dir});
    return 0;
  } catch (const stg::UsageError& e) {
    return fail(e.what());
  } catch (const stg::io::Interrupted& e) {
    // "interrupted by SIGTERM: nothing was written to DIR"; 128 + signal, as shells report it.
    std::fprintf(stderr, "stg: error: %s\n", e.what());
    return 128 + e.signal();
  } catch (const stg::io::OutputError& e) {
    // "cannot write 'DIR/workload.3.et': No space left on device: nothing was written to DIR"
    std::fprintf(stderr, "stg: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stg: internal error: %s\n", e.what());
    return 3;
  }
}

int main(int argc, char** argv) { return dispatch(argc, argv, generate_main); }
