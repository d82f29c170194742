// `stg validate`: its command line and how its report is printed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stg/tools/validate.h"

namespace cli {

// Prints the violations, per-rule counts, errors (to stderr), the verdict
// and the replay summary (tools::replay_summary) when there is one.
void print_validation(const stg::tools::ValidationReport& report);

// `stg validate` with the arguments after the word "validate":
//   DIR [--comm_group FILE] [--threads N] [--show N] [--require_pg_name]
//       [--replay] [--peak_tflops X] [--mem_bw_gbps X] [--link_gbps X]
//       [--network FILE] [--system FILE] [--timeline FILE] [--json]
// Returns the exit status (0 clean, 1 violations, 2 unreadable input or
// usage error).
int validate_main(const std::vector<std::string>& args);

// The same command as a value, what it prints with --json (the Python
// module's stg.validate): throws stg::UsageError on a usage error or
// unreadable input (exit status 2), with the command's message.
nlohmann::ordered_json validate_json(const std::vector<std::string>& args);

}  // namespace cli
