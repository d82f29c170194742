#include "command_line.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "stg/options.h"

namespace cli {

const CLI::Validator kFileName(
    [](const std::string& value) { return value.empty() ? std::string("needs a file name") : ""; },
    "FILE");

namespace {
// The range of a positive figure (TFLOPS, GB/s, GB): wide enough for any
// GPU or link, narrow enough that every time stays finite.
constexpr double kSmallestFigure = 1e-3;
constexpr double kLargestFigure = 1e9;
}  // namespace

const CLI::Validator kPositive(
    [](const std::string& value) {
      try {
        size_t used = 0;
        const double v = std::stod(value, &used);
        // Finite and of a size some hardware has: 1e-300 GB/s or inf TFLOPS
        // would only print "inf" and "nan" figures.
        if (used == value.size() && std::isfinite(v) && v >= kSmallestFigure && v <= kLargestFigure)
          return std::string();
      } catch (const std::exception&) {
      }
      return "'" + value + "' is not a number from 0.001 to 1e9";
    },
    "NUMBER > 0");

void parse_command_flags(CLI::App& app, const IntegerFlags& integers, const std::string& command,
                         std::vector<std::string> args) {
  auto usage_error = [&](const std::string& what) {
    return stg::UsageError(what + " (see stg " + command + " --help)");
  };
  app.get_formatter()->column_width(24);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    throw;
  } catch (const CLI::ParseError& e) {
    if (const std::string message = integers.check(); !message.empty()) throw usage_error(message);
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    throw usage_error(what);
  }
  if (const std::string message = integers.check(); !message.empty()) throw usage_error(message);
}

std::optional<int> parse_command(CLI::App& app, const IntegerFlags& integers,
                                 const std::string& command, std::vector<std::string> args) {
  try {
    parse_command_flags(app, integers, command, std::move(args));
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const stg::UsageError& e) {
    std::fprintf(stderr, "stg %s: error: %s\n", command.c_str(), e.what());
    return 2;
  }
  return std::nullopt;
}

}  // namespace cli
