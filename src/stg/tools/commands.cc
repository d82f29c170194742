// The command lines of `stg validate` and `stg inspect` (CLI11, like the
// generator's own flags): options -> validate_dir / inspect_dir -> report.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "stg/tools/inspect.h"
#include "stg/tools/validate.h"

namespace stg::tools {
namespace {

const char kValidateRules[] =
    "Checks that the per-rank Chakra traces in DIR (v0.0.4, v0.0.1 or JSON) and\n"
    "their comm-group file can be replayed by ASTRA-sim without hanging:\n"
    "  R0 one trace file per rank 0..N-1 (rank = last numeric '.' token of the name)\n"
    "  R1 dependencies exist in the same file, ids unique, no cycles\n"
    "  R2 collectives name a comm group of >= 2 members containing the rank,\n"
    "     with a simulated comm_type (ALL_REDUCE/ALL_GATHER/REDUCE_SCATTER/ALL_TO_ALL)\n"
    "  R3 all members of a group issue the same (type, size) sequence on it\n"
    "  R4 every send has exactly one recv with the same (src, dst, tag, size)\n"
    "  R5 compute nodes have num_ops and a non-zero tensor_size\n"
    "and warns (W1, exit status unchanged) about dependency-free compute nodes that\n"
    "ASTRA-sim's roofline runs in 0 ns, on which it aborts at time 0.";

// Refuses an empty file name (CLI11 accepts "" as a value).
const CLI::Validator kFileName(
    [](const std::string& value) { return value.empty() ? std::string("needs a file name") : ""; },
    "FILE");

// A hardware figure: a positive number (CLI::PositiveNumber's message
// prints the whole double range).
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

// Parses `args` into `app`. Returns an exit status when the command ends
// here: 0 after --help, 2 after a usage error (one line on stderr).
std::optional<int> parse(CLI::App& app, const std::string& command, std::vector<std::string> args) {
  app.get_formatter()->column_width(24);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::fprintf(stderr, "stg %s: error: %s (see stg %s --help)\n", command.c_str(), what.c_str(),
                 command.c_str());
    return 2;
  }
  return std::nullopt;
}

}  // namespace

int validate_main(const std::vector<std::string>& args) {
  CLI::App app{kValidateRules, "stg validate"};
  app.footer(
      "Exit status: 0 clean, 1 violations or a stuck replay, 2 unreadable input or usage "
      "error.");
  ValidateOptions options;
  std::string dir;
  app.add_option("DIR", dir, "directory of per-rank traces")->required();
  app.add_option("--comm_group,--comm_group_file", options.comm_group_file,
                 "comm-group JSON (default: the one in DIR)")
      ->check(kFileName);
  app.add_option("--threads", options.threads, "reader threads (default: one per core)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--show", options.max_shown, "violations printed per rule (default 5)")
      ->check(CLI::Range(0, 1000000));
  app.add_flag("--require_pg_name", options.require_pg_name,
               "v0.0.4 collectives must use the string attribute pg_name");
  app.add_flag("--replay", options.replay,
               "then replay all ranks (order only, ASTRA-sim issue rules) and fail (exit 1) if "
               "some node never completes; holds every rank's graph in memory at once");
  app.add_option("--peak_tflops", options.roofline.peak_tflops,
                 "W1: ASTRA-sim's \"peak-perf\" in TFLOPS (default 989)")
      ->check(kPositive);
  app.add_option("--mem_bw_gbps", options.roofline.mem_bw_gbps,
                 "W1: ASTRA-sim's \"local-mem-bw\" in GB/s (default 3350)")
      ->check(kPositive);
  if (const auto done = parse(app, "validate", args)) return *done;
  const ValidationReport report = validate_dir(dir, options);
  print_report(report);
  return report.exit_status();
}

int inspect_main(const std::vector<std::string>& args) {
  CLI::App app{
      "Summarises the per-rank Chakra traces in DIR (v0.0.4, v0.0.1 or JSON): ranks,\n"
      "nodes by type, compute, collectives by type and group size, send/recv,\n"
      "structure groups and file sizes.",
      "stg inspect"};
  app.footer("Exit status: 0, or 2 on unreadable input or a usage error.");
  InspectOptions options;
  std::string dir;
  bool as_json = false;
  app.add_option("DIR", dir, "directory of per-rank traces")->required();
  app.add_option("--comm_group,--comm_group_file", options.comm_group_file,
                 "comm-group JSON (default: the one in DIR)")
      ->check(kFileName);
  app.add_flag("--json", as_json, "print the figures as JSON");
  app.add_flag("--per_rank", options.per_rank, "also list every rank");
  app.add_option("--threads", options.threads, "reader threads (default: one per core)")
      ->check(CLI::Range(0, 1000000));
  if (const auto done = parse(app, "inspect", args)) return *done;
  const nlohmann::ordered_json figures = inspect_dir(dir, options);
  if (as_json) {
    std::printf("%s\n", figures.dump(1).c_str());
  } else {
    print_inspection(figures);
  }
  for (const auto& e : figures["errors"])
    std::fprintf(stderr, "stg inspect: error: %s\n", e.get<std::string>().c_str());
  std::fflush(stdout);
  return figures["errors"].empty() ? 0 : 2;
}

}  // namespace stg::tools
