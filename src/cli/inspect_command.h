// `stg inspect`: its command line and the text tables of its report.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stg/tools/inspect.h"

namespace cli {

// Prints the figures as text tables (errors are not printed here).
void print_inspection(const stg::tools::InspectReport& report);

// `stg inspect` with the arguments after the word "inspect":
//   DIR [--comm_group FILE] [--json] [--per_rank] [--threads N]
// Returns 0, or 2 on unreadable input or a usage error.
int inspect_main(const std::vector<std::string>& args);

// The same command as a value, what it prints with --json (the Python
// module's stg.inspect): throws stg::UsageError on a usage error or
// unreadable input (exit status 2), with the command's message.
nlohmann::ordered_json inspect_json(const std::vector<std::string>& args);

}  // namespace cli
