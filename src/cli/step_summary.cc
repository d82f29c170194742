#include "step_summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "stg/report/step_figures.h"
#include "text_columns.h"

namespace cli {

namespace {

// Three significant decimals for small figures, whole numbers for large.
std::string fixed(double v) {
  char text[64];
  const int decimals = v < 10 ? 3 : v < 1000 ? 2 : 0;
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

}  // namespace

std::string format_step_summary(const stg::RunSummary& s,
                                const stg::tools::MakespanResult* makespan) {
  if (s.stage_steps.empty()) return "";
  const bool physical = s.physical_units;
  // The axes any stage sends on: the step figures' order, then others
  // (Megatron's "dp x cp" gradient group, ...) by name.
  std::vector<std::string> axes;
  for (const char* name : stg::report::kAxisNames)
    for (const stg::report::RankStep& step : s.stage_steps)
      if (step.axes.count(name) && step.axes.at(name).bytes > 0) {
        axes.push_back(name);
        break;
      }
  for (const stg::report::RankStep& step : s.stage_steps)
    for (const auto& [name, traffic] : step.axes)
      if (traffic.bytes > 0 && std::find(axes.begin(), axes.end(), name) == axes.end())
        axes.push_back(name);
  const int64_t per_stage = s.ranks / std::max<int64_t>(1, s.stages);
  std::map<int64_t, double> done_ms;  // by stage: when its rank's step ends
  if (makespan && makespan->completed && per_stage > 0) {
    for (size_t i = 0; i < makespan->ranks.size(); ++i)
      done_ms[makespan->ranks[i] / per_stage] = makespan->end_ns[i] / 1e6;
  }
  const double flops_unit = physical ? 1e12 : 1e9;
  const double bytes_unit = physical ? 1e9 : 1e6;
  std::string out =
      physical ? "step per rank, by pipeline stage (FLOPs and bytes"
               : "step per rank, by pipeline stage (stg's units, as the reference writes them: "
                 "num_ops in multiply-accumulates, sizes in elements; --units physical gives "
                 "FLOPs and bytes";
  out += done_ms.empty()             ? "):\n"
         : makespan->network.empty() ? "; done at: the replay at ASTRA-sim's roofline, "
                                       "--print_makespan says more):\n"
                                     : "; done at: the replay on ASTRA-sim's network, "
                                       "--print_makespan says more):\n";
  std::string head = "  stage  ranks        " + padded(physical ? "TFLOP" : "G num_ops", 12);
  for (const std::string& a : axes) head += padded(a + (physical ? " GB" : " M el"), 12);
  if (!s.memory.empty()) head += padded("memory GiB", 12);
  if (!done_ms.empty()) head += padded("done at ms", 12);
  out += head + "\n";
  for (size_t st = 0; st < s.stage_steps.size(); ++st) {
    const int64_t first = static_cast<int64_t>(st) * per_stage;
    const bool written =
        std::any_of(s.rank_ranges.begin(), s.rank_ranges.end(), [&](const stg::RankRange& r) {
          return r.first <= first + per_stage - 1 && first <= r.second;
        });
    if (!written) continue;
    const stg::report::RankStep& step = s.stage_steps[st];
    const std::string ranks =
        per_stage == 1 ? std::to_string(first)
                       : std::to_string(first) + "-" + std::to_string(first + per_stage - 1);
    std::string line = "  " + padded(std::to_string(st), 5) + "  " + ranks +
                       std::string(ranks.size() < 11 ? 11 - ranks.size() : 1, ' ') +
                       padded(fixed(static_cast<double>(step.flops) / flops_unit), 12);
    for (const std::string& a : axes) {
      const auto it = step.axes.find(a);
      const double bytes = it == step.axes.end() ? 0 : static_cast<double>(it->second.bytes);
      line += padded(fixed(bytes / bytes_unit), 12);
    }
    if (!s.memory.empty()) {
      double total = 0;
      for (const stg::report::StageMemory& m : s.memory)
        if (m.stage == static_cast<int>(st)) total = m.total();
      line += padded(fixed(total / (1024.0 * 1024.0 * 1024.0)), 12);
    }
    if (!done_ms.empty())
      line += padded(done_ms.count(st) ? fixed(done_ms.at(st)) : std::string("-"), 12);
    out += line + "\n";
  }
  return out;
}

}  // namespace cli
