// Parsing the generator's command line, with its errors in stg's words.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "integer_flags.h"

namespace cli {

// Parses argv into `app` (its flags added by add_generate_flags, the
// integer ones in `integers`). Returns an exit status when the command ends
// here: 0 after --help; 2 after an unknown flag (named, with the closest
// known one; "-dp" is --dp with one dash), an argument that is not a flag, an
// integer flag whose value is not a whole number in its range, or another
// CLI11 parse error (one line on stderr).
std::optional<int> parse_generate_command(CLI::App& app, const IntegerFlags& integers, int argc,
                                          char** argv);

// The same parse for callers that print nothing (the Python module): throws
// stg::UsageError with the message the command line prints after
// "stg: error: ", and lets CLI::CallForHelp through.
void parse_generate_flags(CLI::App& app, const IntegerFlags& integers, int argc, char** argv);

// The same with the arguments after the command's words (`command`, e.g.
// "stg infer", stands for argv[0]).
void parse_generate_flags(CLI::App& app, const IntegerFlags& integers, const std::string& command,
                          std::vector<std::string> args);

}  // namespace cli
