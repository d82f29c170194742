#include "generate_parse.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "messages.h"
#include "stg/options.h"
#include "stg/util/closest.h"

namespace cli {

namespace {

const CLI::Option* find_option(const CLI::App& app, const std::string& name) {
  for (const CLI::Option* opt : app.get_options())
    for (const std::string& n : opt->get_lnames())
      if ("--" + n == name) return opt;
  return nullptr;
}

// "did you mean --dp?" for `name`, or "".
std::string suggestion(const CLI::App& app, const std::string& name) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options())
    for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
  const std::string close = stg::util::closest(name, names);
  return close.empty() ? "" : "did you mean " + close + "?";
}

// An argument where a flag belongs that is not one of ours, in stg's words
// (CLI11's own text would be "The following argument was not expected"):
// an unknown --flag with the closest known one, a flag with one dash
// ("-dp" -> --dp), or a word. "" when every argument is a known flag or the
// value of one.
std::string stray_argument(const CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h") continue;
    if (arg.rfind("--", 0) == 0 && arg != "--") {
      const std::string name = arg.substr(0, arg.find('='));
      const CLI::Option* opt = find_option(app, name);
      if (!opt) {
        const std::string close = suggestion(app, name);
        return "unknown flag " + name + (close.empty() ? "" : ": " + close) + " (see stg --help)";
      }
      // Its value is the next argument, whatever it looks like (--micro_batch -1).
      if (name.size() == arg.size() && opt->get_items_expected_min() > 0) ++i;
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-' && std::isalpha(static_cast<unsigned char>(arg[1]))) {
      const std::string name = "-" + arg.substr(0, arg.find('='));
      const std::string close = suggestion(app, name);
      return "unknown flag " + arg.substr(0, arg.find('=')) + ": flags start with two dashes" +
             (close.empty() ? "" : ", " + close) + " (see stg --help)";
    }
    return "unexpected argument '" + arg +
           "': flags start with two dashes (--dp 2) and the subcommands are generate, infer, "
           "plans, models, validate, inspect and dot (see stg --help)";
  }
  return "";
}

}  // namespace

void parse_generate_flags(CLI::App& app, const IntegerFlags& integers, int argc, char** argv) {
  if (const std::string message = stray_argument(app, argc, argv); !message.empty())
    throw stg::UsageError(message);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    throw;
  } catch (const CLI::ParseError& e) {
    // A value CLI11 cannot convert is an integer flag's: say so in stg's words.
    if (const std::string message = integers.check(); !message.empty())
      throw stg::UsageError(message);
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    throw stg::UsageError(what + " (see stg --help)");
  }
  if (const std::string message = integers.check(); !message.empty())
    throw stg::UsageError(message);
}

void parse_generate_flags(CLI::App& app, const IntegerFlags& integers, const std::string& command,
                          std::vector<std::string> args) {
  args.insert(args.begin(), command);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  parse_generate_flags(app, integers, static_cast<int>(argv.size()), argv.data());
}

std::optional<int> parse_generate_command(CLI::App& app, const IntegerFlags& integers, int argc,
                                          char** argv) {
  try {
    parse_generate_flags(app, integers, argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const stg::UsageError& e) {
    return fail(e.what());
  }
  return std::nullopt;
}

}  // namespace cli
