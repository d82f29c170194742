#include "command_line.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace cli {

const CLI::Validator kFileName(
    [](const std::string& value) { return value.empty() ? std::string("needs a file name") : ""; },
    "FILE");

const CLI::Validator kPositive(
    [](const std::string& value) {
      try {
        size_t used = 0;
        const double v = std::stod(value, &used);
        if (used == value.size() && v > 0) return std::string();
      } catch (const std::exception&) {
      }
      return "'" + value + "' is not a positive number";
    },
    "NUMBER > 0");

std::optional<int> parse_command(CLI::App& app, const IntegerFlags& integers,
                                 const std::string& command, std::vector<std::string> args) {
  auto usage_error = [&](const std::string& what) {
    std::fprintf(stderr, "stg %s: error: %s (see stg %s --help)\n", command.c_str(), what.c_str(),
                 command.c_str());
    return 2;
  };
  app.get_formatter()->column_width(24);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (const std::string message = integers.check(); !message.empty()) return usage_error(message);
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    return usage_error(what);
  }
  if (const std::string message = integers.check(); !message.empty()) return usage_error(message);
  return std::nullopt;
}

}  // namespace cli
