// `stg infer`'s serving flags: added to a command line, checked and set
// into Options::serving (infer_flags.h).
#include "infer_flags.h"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "command_line.h"
#include "generate_options.h"
#include "generate_parse.h"

namespace cli {
namespace {

constexpr const char* kServing = "Serving (stg infer)";

// "P:D", two whole numbers >= 1.
bool parse_pools(const std::string& text, int64_t& p, int64_t& d) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return false;
  try {
    size_t used = 0;
    p = std::stoll(text.substr(0, colon), &used);
    if (used != colon) return false;
    d = std::stoll(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1) return false;
  } catch (const std::exception&) {
    return false;
  }
  return p >= 1 && d >= 1 && p <= stg::kMaxRanks && d <= stg::kMaxRanks;
}

}  // namespace

void add_serving_flags(CLI::App& app, IntegerFlags& integers, ServingFlags& f) {
  stg::Serving& s = f.serving;
  auto group = [&](CLI::Option* option, const std::string& fallback) {
    option->group(kServing);
    option->description(option->get_description() + " [default: " + fallback + "]");
  };
  group(integers.add(app, "--requests", s.requests, "requests served at once (the batch)",
                     stg::kMaxRanks, "an integer >= 1"),
        "64");
  group(integers.add(app, "--prompt_len", s.prompt_len, "prompt tokens per request (the prefill)",
                     stg::kMaxRanks, "an integer >= 1"),
        "2048");
  group(app.add_option("--prefill", f.prefill,
                       "0: no prefill, the decode steps start from KV caches that hold the "
                       "prompts (0/1)"),
        "1");
  group(integers.add(app, "--decode_steps", s.decode_steps,
                     "decode steps of one token per request after the prefill (0: the prefill "
                     "only)",
                     stg::kMaxRanks, "an integer >= 0"),
        "128");
  group(app.add_option("--kv_dtype", f.kv_dtype, "element type of the KV cache: bf16 or fp8"),
        "bf16");
  group(app.add_option("--disaggregate", f.disaggregate,
                       "P:D: the prefill on P replicas of the plan, the decode steps on D others, "
                       "each block's KV cache sent from each prefill rank to the decode ranks "
                       "that serve its requests"),
        "off: both on the same ranks");
  group(app.add_option("--hbm_gb", s.hbm_gb,
                       "GB of memory per GPU: a plan needing more per rank is refused")
            ->check(kPositive),
        "80");
}

// The serving flags into flags.options.serving; a bad value throws
// stg::UsageError. `app` has parsed the command line.
void apply_serving_flags(const CLI::App& app, ServingFlags& serving, GenerateFlags& flags) {
  auto require = [](bool ok, const std::string& message) {
    if (!ok) throw stg::UsageError(message);
  };
  // A preset's training batch and sequence give way to the serving figures;
  // given on the command line, they are a mistake.
  require(app.count("--batch") == 0,
          "--batch is the training batch: stg infer serves --requests R");
  require(app.count("--seq") == 0,
          "--seq is the training sequence: stg infer's prompts are --prompt_len P tokens");
  if (!serving.kv_dtype.empty()) {
    require(serving.kv_dtype == "bf16" || serving.kv_dtype == "fp8",
            "--kv_dtype '" + serving.kv_dtype + "' is not valid: use bf16 or fp8");
    serving.serving.kv_dtype = serving.kv_dtype == "bf16" ? stg::DType::kBf16 : stg::DType::kFp8;
  }
  if (!serving.prefill.empty()) serving.serving.prefill = parse_bool("--prefill", serving.prefill);
  require(serving.disaggregate.empty() ||
              parse_pools(serving.disaggregate, serving.serving.prefill_replicas,
                          serving.serving.decode_replicas),
          "--disaggregate '" + serving.disaggregate +
              "' is not valid: use P:D, whole numbers >= 1 (e.g. 1:1)");
  // --peak_tflops and --mem_bw_gbps are the generator's (--print_makespan's
  // hardware); here they also set the per-phase roofline, so they need no
  // --print_makespan.
  flags.hbm_given = app.count("--hbm_gb") > 0;
  flags.peak_given = flags.peak_tflops > 0;
  flags.mem_bw_given = flags.mem_bw_gbps > 0;
  if (flags.peak_tflops > 0) serving.serving.roofline.peak_tflops = flags.peak_tflops;
  if (flags.mem_bw_gbps > 0) serving.serving.roofline.mem_bw_gbps = flags.mem_bw_gbps;
  if (!flags.print_makespan) flags.peak_tflops = flags.mem_bw_gbps = 0;
  flags.options.serving = serving.serving;
}

const char* const kInferDescription =
    "stg infer: one serving iteration of a decoder model as Chakra execution traces: the "
    "prefill of --requests prompts of --prompt_len tokens, then --decode_steps steps of one "
    "token per request with a KV cache (docs/inference.md). Sizes are FLOPs and bytes unless "
    "--units stg.";

void parse_infer_flags(const std::vector<std::string>& args, GenerateFlags& flags) {
  CLI::App app{kInferDescription, "stg infer"};
  add_generate_flags(app, flags);
  ServingFlags serving;
  add_serving_flags(app, flags.integers, serving);
  try {
    parse_generate_flags(app, flags.integers, "stg infer", args);
  } catch (const CLI::CallForHelp&) {
    throw stg::UsageError("--help is the command line's: run `stg infer --help`");
  }
  apply_serving_flags(app, serving, flags);
}

}  // namespace cli
