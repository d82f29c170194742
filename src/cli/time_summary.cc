#include "time_summary.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "stg/report/step_figures.h"
#include "text_columns.h"

namespace cli {
namespace {

std::string ms(double ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", ns / 1e6);
  return text;
}

// The axes with exposed time on some stage: the step figures' order, then
// others by name.
std::vector<std::string> exposed_axes(const stg::tools::MakespanResult& m) {
  std::vector<std::string> axes;
  const auto add = [&](const std::string& a) {
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) axes.push_back(a);
  };
  for (const char* name : stg::report::kAxisNames)
    for (const std::string& with : {std::string(name), std::string(name) + " p2p"})
      for (const stg::tools::TimeBreakdown& b : m.breakdown)
        if (b.exposed_comm_ns.count(with)) add(with);
  for (const stg::tools::TimeBreakdown& b : m.breakdown)
    for (const auto& [axis, ns] : b.exposed_comm_ns) add(axis);
  return axes;
}

// The stage's compute time by kernel kind, when its traces carry them.
const stg::report::RankStep* kernel_step(const stg::RunSummary& s, int64_t stage) {
  if (stage < 0 || static_cast<size_t>(stage) >= s.stage_steps.size()) return nullptr;
  const stg::report::RankStep& step = s.stage_steps[static_cast<size_t>(stage)];
  for (double seconds : step.kernel_seconds)
    if (seconds > 0) return &step;
  return nullptr;
}

int64_t stage_of(const stg::RunSummary& s, int64_t rank) {
  return rank / std::max<int64_t>(1, s.ranks / std::max<int64_t>(1, s.stages));
}

}  // namespace

std::string format_time_breakdown(const stg::RunSummary& s, const stg::tools::MakespanResult& m) {
  if (!m.completed || m.breakdown.size() != m.ranks.size() || m.ranks.empty()) return "";
  const std::vector<std::string> axes = exposed_axes(m);
  bool kinds = false;
  for (int64_t rank : m.ranks) kinds = kinds || kernel_step(s, stage_of(s, rank));
  std::string out =
      "time per rank, by pipeline stage (ms; compute, exposed communication by axis and the "
      "pipeline bubble add up to the makespan";
  out += kinds ? "; compute by kernel kind from duration_micros):\n" : "):\n";
  std::string head = "  stage    rank" + padded("compute", 12);
  if (kinds)
    for (const char* kind : stg::report::kKernelKinds) head += padded(kind, 14);
  for (const std::string& a : axes) head += padded(a + " comm", std::max<size_t>(13, a.size() + 7));
  out += head + padded("bubble", 12) + "\n";
  for (size_t i = 0; i < m.ranks.size(); ++i) {
    const stg::tools::TimeBreakdown& b = m.breakdown[i];
    std::string line = "  " + padded(std::to_string(stage_of(s, m.ranks[i])), 5) +
                       padded(std::to_string(m.ranks[i]), 8) + padded(ms(b.compute_ns), 12);
    if (kinds) {
      const stg::report::RankStep* step = kernel_step(s, stage_of(s, m.ranks[i]));
      for (size_t k = 0; k < stg::report::kKernelKinds.size(); ++k)
        line += padded(step ? ms(step->kernel_seconds[k] * 1e9) : "-", 14);
    }
    for (const std::string& a : axes) {
      const auto it = b.exposed_comm_ns.find(a);
      line += padded(ms(it == b.exposed_comm_ns.end() ? 0 : it->second),
                     std::max<size_t>(13, a.size() + 7));
    }
    out += line + padded(ms(b.bubble_ns), 12) + "\n";
  }
  return out;
}

nlohmann::ordered_json time_breakdown_json(const stg::RunSummary& s,
                                           const stg::tools::MakespanResult& m) {
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  if (!m.completed || m.breakdown.size() != m.ranks.size()) return stages;
  for (size_t i = 0; i < m.ranks.size(); ++i) {
    const stg::tools::TimeBreakdown& b = m.breakdown[i];
    nlohmann::ordered_json j;
    j["stage"] = stage_of(s, m.ranks[i]);
    j["rank"] = m.ranks[i];
    j["done_ms"] = m.end_ns[i] / 1e6;
    j["compute_ms"] = b.compute_ns / 1e6;
    if (const stg::report::RankStep* step = kernel_step(s, stage_of(s, m.ranks[i]))) {
      nlohmann::ordered_json kinds;
      for (size_t k = 0; k < stg::report::kKernelKinds.size(); ++k)
        kinds[stg::report::kKernelKinds[k]] = step->kernel_seconds[k] * 1e3;
      j["kernels_ms"] = kinds;
    }
    nlohmann::ordered_json exposed = nlohmann::ordered_json::object();
    for (const auto& [axis, ns] : b.exposed_comm_ns) exposed[axis] = ns / 1e6;
    j["exposed_comm_ms"] = exposed;
    j["bubble_ms"] = b.bubble_ns / 1e6;
    stages.push_back(j);
  }
  return stages;
}

}  // namespace cli
