#include "validate_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <limits>

#include "command_line.h"
#include "progress_bar.h"
#include "stg/options.h"
#include "stg/tools/validate_json.h"

namespace cli {
namespace {

using stg::tools::Rule;

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

// The violations kept for one rule and its count line.
void print_rule(const stg::tools::ValidationReport& report, Rule rule) {
  const int64_t count = report.count(rule);
  int64_t shown = 0;
  for (const stg::tools::Violation& v : report.shown) {
    if (v.rule != rule) continue;
    std::printf("%s %s\n", rule_label(rule), v.message.c_str());
    ++shown;
  }
  std::printf("%s %s: %lld violation%s", rule_label(rule), rule_title(rule),
              static_cast<long long>(count), count == 1 ? "" : "s");
  if (shown < count) std::printf(" (%lld shown)", static_cast<long long>(shown));
  std::printf("\n");
}

void print_warnings(const stg::tools::ValidationReport& report) {
  for (const std::string& w : report.warnings) std::printf("W1 %s\n", w.c_str());
  if (report.zero_time_roots > 0)
    std::printf(
        "W1 warning: %lld compute node%s without dependencies run%s in 0 ns under ASTRA-sim's "
        "roofline (%g TFLOPS, %g GB/s; --peak_tflops, --mem_bw_gbps), which aborts at time 0 "
        "(EventQueue: get_event_time() > current_time); use larger dimensions\n",
        static_cast<long long>(report.zero_time_roots), report.zero_time_roots == 1 ? "" : "s",
        report.zero_time_roots == 1 ? "s" : "", report.roofline.peak_tflops,
        report.roofline.mem_bw_gbps);
}

// What `stg validate` was asked for.
struct ValidateRequest {
  stg::tools::ValidateOptions options;
  std::string dir;
  std::string timeline_file;
  bool as_json = false;
  IntegerFlags integers;
};

void add_options(CLI::App& app, ValidateRequest& r) {
  stg::tools::ValidateOptions& options = r.options;
  app.add_option("DIR", r.dir, "directory of per-rank traces")->required();
  app.add_option("--comm_group,--comm_group_file", options.comm_group_file,
                 "comm-group JSON (default: the one in DIR)")
      ->check(kFileName);
  r.integers.add(app, "--threads", options.threads, "reader threads (default: one per core)",
                 stg::kMaxThreads,
                 "an integer up to " + std::to_string(stg::kMaxThreads) + " (0: one per core)");
  r.integers.add(app, "--show", options.max_shown, "violations printed per rule (default 5)",
                 std::numeric_limits<int>::max(), "an integer >= 0", 0);
  app.add_flag("--require_pg_name", options.require_pg_name,
               "v0.0.4 collectives must use the string attribute pg_name");
  app.add_flag("--replay", options.replay,
               "then replay all ranks (order only, ASTRA-sim issue rules) and fail (exit 1) if "
               "some node never completes; holds every rank's graph in memory at once");
  app.add_option("--peak_tflops", options.roofline.peak_tflops,
                 "W1 and the makespan: ASTRA-sim's \"peak-perf\" in TFLOPS (default 989)")
      ->check(kPositive);
  app.add_option("--mem_bw_gbps", options.roofline.mem_bw_gbps,
                 "W1 and the makespan: ASTRA-sim's \"local-mem-bw\" in GB/s (default 3350)")
      ->check(kPositive);
  app.add_option("--link_gbps", options.figures.link_gbps,
                 "the makespan: GB/s per message, a send or collective taking comm_size / "
                 "link_gbps (default 100; without a network description in DIR, or instead "
                 "of it)")
      ->check(kPositive);
  app.add_option("--network", options.figures.network_file,
                 "the makespan on ASTRA-sim's network: its network yml (default: DIR/" +
                     std::string(stg::tools::kAstraSimNetworkFile) +
                     " when present, as --astra_sim writes it)")
      ->check(kFileName);
  app.add_option("--system", options.figures.system_file,
                 "with the network: ASTRA-sim's system json (default: DIR/" +
                     std::string(stg::tools::kAstraSimSystemFile) + ")")
      ->check(kFileName);
  app.add_option("--timeline", r.timeline_file,
                 "with --replay: write the makespan's order as Chrome trace-event JSON to FILE "
                 "(Perfetto, chrome://tracing): one process per rank, compute and communication "
                 "tracks")
      ->check(kFileName);
  app.add_flag("--json", r.as_json, "print the report as JSON");
}

void describe(CLI::App& app) {
  app.footer(
      "Exit status: 0 clean, 1 violations or a stuck replay, 2 unreadable input or usage "
      "error.");
}

// Which figures were given on the command line (they override the network
// description's, makespan_setup.h).
void note_given(const CLI::App& app, ValidateRequest& r) {
  stg::tools::MakespanFigures& f = r.options.figures;
  f.peak_tflops_given = app.count("--peak_tflops") > 0;
  f.mem_bw_gbps_given = app.count("--mem_bw_gbps") > 0;
  f.link_gbps_given = app.count("--link_gbps") > 0;
}

// The checks after parsing; "" or the usage error.
std::string check_request(ValidateRequest& r) {
  const stg::tools::MakespanFigures& f = r.options.figures;
  if (f.link_gbps_given && (!f.network_file.empty() || !f.system_file.empty()))
    return std::string(f.network_file.empty() ? "--system" : "--network") +
           " charges messages on ASTRA-sim's network, --link_gbps at one bandwidth: drop one";
  if (!r.timeline_file.empty() && !r.options.replay)
    return "--timeline " + r.timeline_file +
           " needs --replay (the timeline is the replay's): add --replay";
  r.options.makespan = r.options.replay;
  r.options.timeline = !r.timeline_file.empty();
  return "";
}

// Writes --timeline FILE when asked and the makespan ran; false when it
// cannot be written.
bool write_timeline(const ValidateRequest& r, const stg::tools::ValidationReport& report) {
  if (!r.options.timeline || !report.makespan || !report.makespan->completed) return true;
  std::ofstream out(r.timeline_file, std::ios::binary | std::ios::trunc);
  out << stg::tools::chrome_trace_json(report.makespan->timeline);
  return static_cast<bool>(out.flush());
}

}  // namespace

void print_validation(const stg::tools::ValidationReport& report) {
  for (const std::string& note : report.notes) std::printf("validate: note: %s\n", note.c_str());
  for (int r = 0; r < stg::tools::kNumRules; ++r)
    if (report.counts[r] != 0) print_rule(report, static_cast<Rule>(r));
  print_warnings(report);
  // Without any file read, the verdict line carries the only error.
  if (report.ranks > 0 || report.errors.size() > 1)
    for (const std::string& e : report.errors)
      std::fprintf(stderr, "validate: error: %s\n", e.c_str());
  // Unreadable input is an error (stderr, as inspect and dot print theirs);
  // a verdict on readable traces is the report (stdout).
  std::fprintf(report.exit_status() == 2 ? stderr : stdout, "%s\n", report.verdict().c_str());
  if (report.replay) std::fputs(stg::tools::replay_summary(*report.replay).c_str(), stdout);
  if (report.makespan) std::fputs(stg::tools::makespan_summary(*report.makespan).c_str(), stdout);
  std::fflush(stdout);
}

int validate_main(const std::vector<std::string>& args) {
  CLI::App app{kValidateRules, "stg validate"};
  describe(app);
  ValidateRequest r;
  add_options(app, r);
  if (const auto done = parse_command(app, r.integers, "validate", args)) return *done;
  note_given(app, r);
  if (const std::string error = check_request(r); !error.empty()) {
    std::fprintf(stderr, "stg validate: error: %s\n", error.c_str());
    return 2;
  }
  stg::tools::ValidationReport report;
  {
    ProgressBar bar;  // on a terminal, after a second
    r.options.progress = &bar;
    report = stg::tools::validate_dir(r.dir, r.options);
    r.options.progress = nullptr;
  }
  if (r.as_json) {
    std::printf("%s\n", stg::tools::to_json(report).dump(1).c_str());
    std::fflush(stdout);
  } else {
    print_validation(report);
  }
  if (!write_timeline(r, report)) {
    std::fprintf(stderr, "stg validate: error: --timeline %s cannot be written\n",
                 r.timeline_file.c_str());
    return 2;
  }
  if (r.options.timeline && report.makespan && report.makespan->completed && !r.as_json)
    std::printf("timeline: %zu events written to %s\n", report.makespan->timeline.size(),
                r.timeline_file.c_str());
  return report.exit_status();
}

nlohmann::ordered_json validate_json(const std::vector<std::string>& args) {
  CLI::App app{kValidateRules, "stg validate"};
  describe(app);
  ValidateRequest r;
  add_options(app, r);
  parse_command_flags(app, r.integers, "validate", args);
  note_given(app, r);
  if (const std::string error = check_request(r); !error.empty()) throw stg::UsageError(error);
  const stg::tools::ValidationReport report = stg::tools::validate_dir(r.dir, r.options);
  if (report.exit_status() == 2) {
    std::string errors;
    for (const std::string& e : report.errors) errors += (errors.empty() ? "" : "; ") + e;
    throw stg::UsageError(errors.empty() ? report.verdict() : errors);
  }
  if (!write_timeline(r, report))
    throw stg::UsageError("--timeline " + r.timeline_file + " cannot be written");
  return stg::tools::to_json(report);
}

}  // namespace cli
