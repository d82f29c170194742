// What the command lines of `stg validate` and `stg inspect` share: their
// argument parsing (CLI11, like the generator's own flags) and validators.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "integer_flags.h"

namespace cli {

// Refuses an empty file name (CLI11 accepts "" as a value).
extern const CLI::Validator kFileName;

// A positive number (CLI::PositiveNumber's message prints the whole double
// range).
extern const CLI::Validator kPositive;

// Parses `args` (the arguments after the word `command`) into `app`, its
// integer flags in `integers`. Returns an exit status when the command ends
// here: 0 after --help, 2 after a usage error (one line on stderr).
std::optional<int> parse_command(CLI::App& app, const IntegerFlags& integers,
                                 const std::string& command, std::vector<std::string> args);

// The same parse for callers that print nothing (the Python module): throws
// stg::UsageError with the line the command prints after "stg COMMAND:
// error: ", and lets CLI::CallForHelp through.
void parse_command_flags(CLI::App& app, const IntegerFlags& integers, const std::string& command,
                         std::vector<std::string> args);

}  // namespace cli
