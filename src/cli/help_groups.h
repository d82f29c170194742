// `stg --help` groups the flags as docs/*.md do (Output, Parallelism,
// Model, ...) and shows every default.
#pragma once

#include <CLI/CLI.hpp>

namespace cli {

// Puts each of `app`'s flags into its docs group and appends its default
// ("[default: 1]") to its description. A flag missing from the table goes to
// the group "Other" (tests/cli_test.cc checks that none does).
void apply_help_groups(CLI::App& app);

}  // namespace cli
