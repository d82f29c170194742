// `stg infer`: the generator's model, plan and output flags with the
// serving ones; sets Options::serving and runs the generator, which writes
// the traces of one serving iteration and returns its per-phase figures and
// memory per rank (report/serving.h), printed before the summary line.
#include "infer_command.h"

#include <CLI/CLI.hpp>

#include "generate_flags.h"
#include "generate_parse.h"
#include "generate_run.h"
#include "infer_flags.h"
#include "messages.h"

namespace cli {

int infer_main(int argc, char** argv) {
  CLI::App app{kInferDescription, "stg infer"};
  GenerateFlags flags;
  add_generate_flags(app, flags);
  ServingFlags serving;
  add_serving_flags(app, flags.integers, serving);
  if (const auto status = parse_generate_command(app, flags.integers, argc, argv)) return *status;
  try {
    apply_serving_flags(app, serving, flags);
  } catch (const stg::UsageError& e) {
    return fail(e.what());
  }
  return run_generate_command(flags);
}

}  // namespace cli
