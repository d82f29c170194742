#include "generate_run.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "calls.h"
#include "generate_options.h"
#include "messages.h"
#include "progress_bar.h"
#include "step_summary.h"
#include "stg/generate.h"
#include "stg/io/cancel.h"
#include "stg/io/output_files.h"
#include "stg/report/step_figures.h"
#include "stg/tools/makespan.h"
#include "stg/workloads/build_workload.h"
#include "stop_signals.h"
#include "time_summary.h"
#include "timed_run.h"
#include "validate_command.h"

namespace cli {

namespace {

int print_passes(const stg::Options& o) {
  const stg::models::Workload w = stg::workloads::build_workload(o);
  std::fputs(stg::build_pipeline(o, w).print().c_str(), stdout);
  return 0;
}

// The run, with a progress bar unless --quiet; a stop signal ends it early.
// A timed run (--print_makespan) replays the first rank of each stage, so a
// part (--ranks) must hold them.
stg::RunSummary generate_traces(const GenerateFlags& f, bool timed) {
  const StopSignals stop_signals;
  std::optional<ProgressBar> bar;
  if (!f.quiet && !f.json) bar.emplace();
  stg::Options o = f.options;
  o.needs_first_rank_of_each_stage = timed;
  return stg::generate(o, bar ? &*bar : nullptr);
}

// 1528 -> "1,528".
std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
  return digits;
}

// The default summary's "done at" column: the replay at the default figures
// of a whole run whose traces count FLOPs and bytes, unless its stages are
// so long (millions of nodes) that the replay would outlast the run.
bool summary_makespan(const GenerateFlags& f, const stg::RunSummary& s) {
  constexpr int64_t kMostNodesReplayed = 4'000'000;
  const bool whole = stg::ranks_in(s.rank_ranges) == s.ranks;
  return !f.quiet && !f.json && s.physical_units && whole && s.ranks > 0 &&
         s.nodes / s.ranks * s.stages <= kMostNodesReplayed;
}

// "8 ranks", "ranks 32-63 of 64", "ranks 0-1,32 of 64", "no ranks of 64".
std::string ranks_written(const stg::RunSummary& s) {
  const int64_t n = stg::ranks_in(s.rank_ranges);
  if (n == s.ranks) return std::to_string(s.ranks) + " ranks";
  if (n == 0) return "no ranks of " + std::to_string(s.ranks);
  std::string list;
  for (const auto& [first, last] : s.rank_ranges)
    list += (list.empty() ? "" : ",") + std::to_string(first) +
            (last == first ? "" : "-" + std::to_string(last));
  return "ranks " + list + " of " + std::to_string(s.ranks);
}

// "stg: 8 ranks, 9 files, ..." for a whole run, "stg: ranks 32-63 of 64, 32
// files, ..." for a part (--ranks, --shard): what this process wrote.
void print_summary(const GenerateFlags& f, const stg::RunSummary& s, double seconds,
                   const stg::tools::MakespanResult* makespan) {
  if (!s.memory_report.empty()) std::fputs(s.memory_report.c_str(), stdout);
  // The serving table is stg infer's default output: --quiet drops it.
  if (s.serving && !f.quiet) std::fputs(stg::report::format_serving(*s.serving).c_str(), stdout);
  if (f.print_step_figures) std::fputs(stg::report::format_step_figures(s.step).c_str(), stdout);
  if (makespan && f.print_makespan) {
    std::fputs(stg::tools::makespan_by_stage_summary(*makespan).c_str(), stdout);
    std::fputs(format_time_breakdown(s, *makespan).c_str(), stdout);
  }
  if (f.quiet) return;
  std::fputs(format_step_summary(s, makespan).c_str(), stdout);
  const std::string ranks = ranks_written(s);
  const std::string removed = s.stale_files_removed == 0
                                  ? ""
                                  : " (removed " + with_commas(s.stale_files_removed) +
                                        " rank file" + (s.stale_files_removed == 1 ? "" : "s") +
                                        " of an earlier run)";
  std::printf("stg: %s, %lld files, %lld bytes, %lld nodes in %.3f s -> %s%s\n", ranks.c_str(),
              static_cast<long long>(s.files), static_cast<long long>(s.bytes),
              static_cast<long long>(s.nodes), seconds, f.options.output_dir.c_str(),
              removed.c_str());
}

int run(const GenerateFlags& f, std::vector<std::string> notes) {
  if (f.print_passes) return print_passes(f.options);
  const std::optional<stg::tools::MakespanOptions> timed = makespan_options(f);
  const auto start = std::chrono::steady_clock::now();
  const stg::RunSummary s = generate_traces(f, timed.has_value());
  // A signal that came while the files were being moved into place: the
  // run is complete, but the caller asked us to stop.
  if (const int sig = stg::io::stop_signal.load()) {
    print_error("interrupted by " + stg::io::signal_name(sig) + " after the run was complete in " +
                f.options.output_dir);
    return 128 + sig;
  }
  if (!f.json)
    for (const std::string& n : s.notes) note(n);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::optional<stg::tools::MakespanResult> makespan;
  if (timed || summary_makespan(f, s))
    makespan = stage_makespan(f, s, timed.value_or(makespan_defaults(f.options)));
  // Only an asked-for makespan that cannot finish is an error.
  const bool stuck = timed && makespan && !makespan->completed;
  if (f.json) {
    nlohmann::ordered_json j = run_json(f, s, std::move(notes));
    j["seconds"] = seconds;
    if (makespan && (makespan->completed || stuck)) add_makespan_json(j, s, *makespan);
    std::printf("%s\n", j.dump(1).c_str());
    if (f.validate && j["validation"].value("exit_status", 0) != 0) return 1;
    return stuck ? 1 : 0;
  }
  print_summary(f, s, seconds, makespan ? &*makespan : nullptr);
  if (f.validate) return validate_main({f.options.output_dir});
  return stuck ? 1 : 0;
}

}  // namespace

int run_generate_command(GenerateFlags& flags) {
  try {
    std::vector<std::string> notes = apply_text_flags(flags);
    if (!flags.json)
      for (const std::string& n : notes) note(n);
    return run(flags, flags.json ? std::move(notes) : std::vector<std::string>());
  } catch (const stg::UsageError& e) {
    return fail(e.what());
  } catch (const stg::io::Interrupted& e) {
    // "interrupted by SIGTERM: nothing was written to DIR"; 128 + signal, as shells report it.
    print_error(e.what());
    return 128 + e.signal();
  } catch (const stg::io::OutputError& e) {
    // "cannot write 'DIR/workload.3.et': No space left on device: nothing was written to DIR"
    print_error(e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stg: internal error: %s\n", e.what());
    return 3;
  }
}

}  // namespace cli
