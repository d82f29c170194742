#include "calls.h"

#include <CLI/CLI.hpp>
#include <optional>
#include <utility>

#include "generate_flags.h"
#include "generate_options.h"
#include "generate_parse.h"
#include "infer_flags.h"
#include "stg/generate.h"
#include "stg/summary_json.h"
#include "timed_run.h"
#include "validate_command.h"

namespace cli {

namespace {

// The generator's flags from `args`, text flags applied; the notes of
// --hf_config in `notes`.
void parse(const std::vector<std::string>& args, GenerateFlags& flags,
           std::vector<std::string>& notes) {
  CLI::App app{"stg"};
  add_generate_flags(app, flags);
  try {
    parse_generate_flags(app, flags.integers, "stg", args);
  } catch (const CLI::CallForHelp&) {
    throw stg::UsageError("--help is the command line's: run `stg --help`");
  }
  if (flags.version || flags.print_passes)
    throw stg::UsageError(std::string(flags.version ? "--version" : "--print_passes") +
                          " prints and exits: run it on the command line");
  notes = apply_text_flags(flags);
}

// The run of `flags` (its traces written) as JSON; with --print_makespan
// its replay too (cli/timed_run.h).
nlohmann::ordered_json generated(const GenerateFlags& flags, std::vector<std::string> notes) {
  const std::optional<stg::tools::MakespanOptions> timed = makespan_options(flags);
  stg::Options o = flags.options;
  o.needs_first_rank_of_each_stage = timed.has_value();
  const stg::RunSummary summary = stg::generate(o);
  nlohmann::ordered_json j = run_json(flags, summary, std::move(notes));
  if (timed) add_makespan_json(j, summary, stage_makespan(flags, summary, *timed));
  return j;
}

}  // namespace

nlohmann::ordered_json run_json(const GenerateFlags& flags, const stg::RunSummary& summary,
                                std::vector<std::string> notes) {
  nlohmann::ordered_json j = stg::to_json(summary);
  j["output_dir"] = flags.options.output_dir;
  notes.insert(notes.end(), summary.notes.begin(), summary.notes.end());
  j["notes"] = notes;
  if (flags.validate) j["validation"] = validate_json({flags.options.output_dir});
  return j;
}

nlohmann::ordered_json generate_call(const std::vector<std::string>& args) {
  GenerateFlags flags;
  std::vector<std::string> notes;
  parse(args, flags, notes);
  return generated(flags, std::move(notes));
}

nlohmann::ordered_json plan_call(const std::vector<std::string>& args) {
  GenerateFlags flags;
  std::vector<std::string> notes;
  parse(args, flags, notes);
  const stg::PlanSummary summary = stg::plan(flags.options);
  nlohmann::ordered_json j = stg::to_json(summary);
  notes.insert(notes.end(), summary.notes.begin(), summary.notes.end());
  j["notes"] = notes;
  return j;
}

nlohmann::ordered_json infer_call(const std::vector<std::string>& args) {
  GenerateFlags flags;
  parse_infer_flags(args, flags);
  return generated(flags, apply_text_flags(flags));
}

}  // namespace cli
