// The JSON layout of a validation report (`stg validate --json`, and the
// Python module's stg.validate), beside the report rather than in the
// command line so that every caller gets the same layout.
#pragma once

#include <nlohmann/json.hpp>

#include "stg/tools/validate.h"

namespace stg::tools {

// {"directory", "comm_group_file", "ranks", "files", "nodes", "verdict",
//  "exit_status", "violations": {"R0": {"title", "count", "shown": [...]}, ...},
//  "warnings": [...], "zero_time_roots", "errors": [...], "notes": [...],
//  "replay": {...} or null, "makespan": {...} or null}
nlohmann::ordered_json to_json(const ValidationReport& report);

}  // namespace stg::tools
