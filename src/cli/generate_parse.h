// Parsing the generator's command line, with its errors in stg's words.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>

namespace cli {

// Parses argv into `app` (its flags added by add_generate_flags). Returns
// an exit status when the command ends here: 0 after --help; 2 after an
// unknown flag (named, with the closest known one), a value that is not a
// whole number, or another CLI11 parse error (one line on stderr).
std::optional<int> parse_generate_command(CLI::App& app, int argc, char** argv);

}  // namespace cli
