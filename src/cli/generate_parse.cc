#include "generate_parse.h"

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "messages.h"
#include "stg/util/closest.h"

namespace cli {

namespace {

// CLI11's "Could not convert" for a flag that takes a whole number, in the
// flag's words: "--dp 2.5 is not a whole number: use an integer >= 1".
std::string not_a_whole_number(const CLI::App& app) {
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_type_name() != "INT" || opt->count() == 0) continue;
    const std::string text = opt->results().back();
    size_t used = 0;
    try {
      std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == text.size() && !text.empty()) continue;
    const std::string name = opt->get_name();
    std::string valid = "an integer >= 1";
    if (name == "--threads") valid = "an integer (0 or less: one per core)";
    if (name == "--zero_stage") valid = "an integer from 0 to 3";
    if (name == "--micro_batch") valid = "an integer >= 1, or -1 for no micro-batching";
    return name + " " + text + " is not a whole number: use " + valid;
  }
  return "";
}

// An unknown flag is named, with the closest known one: "" when all are known.
std::string unknown_flag(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options())
    for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || arg == "--") continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    const std::string close = stg::util::closest(name, names);
    return "unknown flag " + name + (close.empty() ? "" : ": did you mean " + close + "?") +
           " (see stg --help)";
  }
  return "";
}

}  // namespace

std::optional<int> parse_generate_command(CLI::App& app, int argc, char** argv) {
  if (const std::string message = unknown_flag(app, argc, argv); !message.empty())
    return fail(message);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ConversionError& e) {
    const std::string message = not_a_whole_number(app);
    if (!message.empty()) return fail(message);
    return fail(std::string(e.what()) + " (see stg --help)");
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    return fail(what + " (see stg --help)");
  }
  return std::nullopt;
}

}  // namespace cli
