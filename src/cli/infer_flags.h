// `stg infer`'s serving flags (docs/inference.md): shared by the command
// (infer_command.cc) and the Python module's stg.infer (calls.h).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "generate_flags.h"
#include "integer_flags.h"
#include "stg/options.h"

namespace cli {

// The serving flags as given, before their checks.
struct ServingFlags {
  stg::Serving serving;
  std::string kv_dtype, prefill, disaggregate;
};

extern const char* const kInferDescription;

void add_serving_flags(CLI::App& app, IntegerFlags& integers, ServingFlags& f);

// The serving flags into flags.options.serving; a bad value (or a training
// flag: --batch, --seq) throws stg::UsageError. `app` has parsed the command
// line.
void apply_serving_flags(const CLI::App& app, ServingFlags& serving, GenerateFlags& flags);

// `args` (after the word `infer`) into `flags`, as `stg infer` reads them.
void parse_infer_flags(const std::vector<std::string>& args, GenerateFlags& flags);

}  // namespace cli
