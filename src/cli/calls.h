// The commands as functions, for callers that print nothing (the Python
// module): the arguments are the command line's, parsed by the same flags
// and checks; the results are what the commands print with --json; a bad
// argument throws stg::UsageError with the message the command prints.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "generate_flags.h"
#include "stg/generate.h"

namespace cli {

// The JSON of a finished run of `flags`: the summary (summary_json.h), the
// output directory, `notes` then the run's, and with --validate the
// validation. What `--json` prints and what the calls below return.
nlohmann::ordered_json run_json(const GenerateFlags& flags, const stg::RunSummary& summary,
                                std::vector<std::string> notes);

// `stg [generate] ARGS`: the run's summary (summary_json.h), with the notes
// the command prints; with --validate, "validation": what `stg validate
// --json` prints for the output directory. Throws stg::io::OutputError when
// the files cannot be written.
nlohmann::ordered_json generate_call(const std::vector<std::string>& args);

// The same flags, nothing written: the figures of the run (stg::plan).
nlohmann::ordered_json plan_call(const std::vector<std::string>& args);

// `stg infer ARGS`: the run's summary with "serving", the per-phase figures
// and memory per rank the command prints.
nlohmann::ordered_json infer_call(const std::vector<std::string>& args);

}  // namespace cli
