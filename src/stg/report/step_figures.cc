#include "stg/report/step_figures.h"

#include <algorithm>
#include <cstdio>
#include <iterator>

namespace stg::report {
namespace {

using json = nlohmann::ordered_json;

// Position in kAxisNames; unknown names after all of them, by name.
size_t axis_order(const std::string& name) {
  const auto it = std::find(std::begin(kAxisNames), std::end(kAxisNames), name);
  return static_cast<size_t>(it - std::begin(kAxisNames));
}

json spread_json(const RankSpread& s) {
  return json{{"total", to_json(s.total)},
              {"min", s.min},
              {"min_rank", s.min_rank},
              {"max", s.max},
              {"max_rank", s.max_rank}};
}

RankSpread spread_from_json(const json& j) {
  RankSpread s;
  s.total = exact_total_from_json(j.at("total"));
  s.min = j.at("min").get<int64_t>();
  s.min_rank = j.at("min_rank").get<int64_t>();
  s.max = j.at("max").get<int64_t>();
  s.max_rank = j.at("max_rank").get<int64_t>();
  return s;
}

std::string spread_text(const RankSpread& s) {
  return std::to_string(s.min) + " (rank " + std::to_string(s.min_rank) + ") .. " +
         std::to_string(s.max) + " (rank " + std::to_string(s.max_rank) + ")";
}

std::string count_text(const RankSpread& s) {
  return s.min == s.max ? std::to_string(s.min)
                        : std::to_string(s.min) + " .. " + std::to_string(s.max);
}

void append_row(std::string& out, const std::string& label, int64_t ranks, const RankSpread& ops,
                const RankSpread& bytes) {
  char line[512];
  std::snprintf(line, sizeof line, "  %-22s %6lld %12s %44s %20s\n", label.c_str(),
                static_cast<long long>(ranks), count_text(ops).c_str(), spread_text(bytes).c_str(),
                bytes.total.text().c_str());
  out += line;
}

}  // namespace

void RankSpread::add(int64_t rank, int64_t value) {
  total += value;
  if (min_rank < 0 || value < min || (value == min && rank < min_rank)) {
    min = value;
    min_rank = rank;
  }
  if (max_rank < 0 || value > max || (value == max && rank < max_rank)) {
    max = value;
    max_rank = rank;
  }
}

void RankTraffic::add(const RankTraffic& o) {
  ops += o.ops;
  bytes += o.bytes;
  received_ops += o.received_ops;
  received_bytes += o.received_bytes;
}

void StepFigures::add(int64_t rank, const RankStep& step) {
  ++ranks;
  flops.add(rank, step.flops);
  for (const auto& [axis_name, t] : step.axes) {
    // A named reference: clang before 16 cannot capture a structured binding.
    const std::string& name = axis_name;
    if (t.ops == 0 && t.received_ops == 0) continue;
    auto it = std::find_if(axes.begin(), axes.end(),
                           [&](const AxisFigures& a) { return a.axis == name; });
    if (it == axes.end()) {
      AxisFigures a;
      a.axis = name;
      const auto at = std::find_if(axes.begin(), axes.end(), [&](const AxisFigures& b) {
        const size_t x = axis_order(name), y = axis_order(b.axis);
        return x != y ? x < y : name < b.axis;
      });
      it = axes.insert(at, std::move(a));
    }
    ++it->ranks;
    it->ops.add(rank, t.ops);
    it->bytes.add(rank, t.bytes);
    if (point_to_point(name)) {  // collectives have no receiving side of their own
      it->received_ops.add(rank, t.received_ops);
      it->received_bytes.add(rank, t.received_bytes);
    }
  }
}

json to_json(const StepFigures& f) {
  json axes = json::object();
  for (const AxisFigures& a : f.axes) {
    if (point_to_point(a.axis)) {
      axes[a.axis] = json{{"ranks", a.ranks},
                          {"sends", spread_json(a.ops)},
                          {"bytes_sent", spread_json(a.bytes)},
                          {"recvs", spread_json(a.received_ops)},
                          {"bytes_received", spread_json(a.received_bytes)}};
    } else {
      axes[a.axis] = json{
          {"ranks", a.ranks}, {"collectives", spread_json(a.ops)}, {"bytes", spread_json(a.bytes)}};
    }
  }
  return json{
      {"units", f.units}, {"ranks", f.ranks}, {"flops", spread_json(f.flops)}, {"axes", axes}};
}

StepFigures step_figures_from_json(const json& j) {
  StepFigures f;
  f.units = j.at("units").get<std::string>();
  f.ranks = j.at("ranks").get<int64_t>();
  f.flops = spread_from_json(j.at("flops"));
  for (const auto& [name, a] : j.at("axes").items()) {
    AxisFigures x;
    x.axis = name;
    x.ranks = a.at("ranks").get<int64_t>();
    if (point_to_point(name)) {
      x.ops = spread_from_json(a.at("sends"));
      x.bytes = spread_from_json(a.at("bytes_sent"));
      x.received_ops = spread_from_json(a.at("recvs"));
      x.received_bytes = spread_from_json(a.at("bytes_received"));
    } else {
      x.ops = spread_from_json(a.at("collectives"));
      x.bytes = spread_from_json(a.at("bytes"));
    }
    f.axes.push_back(std::move(x));
  }
  return f;
}

std::string format_step_figures(const StepFigures& f) {
  std::string out = "per-step figures over " + std::to_string(f.ranks) + " ranks (" + f.units +
                    ")\n  compute num_ops: " + f.flops.total.text() + " total, per rank " +
                    spread_text(f.flops) + "\n";
  if (f.axes.empty()) return out + "  no communication\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %-22s %6s %12s %44s %20s\n", "axis", "ranks", "count/rank",
                "bytes/rank: min .. max", "bytes total");
  out += line;
  for (const AxisFigures& a : f.axes) {
    if (point_to_point(a.axis)) {
      append_row(out, a.axis + " sent", a.ranks, a.ops, a.bytes);
      append_row(out, a.axis + " received", a.ranks, a.received_ops, a.received_bytes);
    } else {
      append_row(out, a.axis + " collectives", a.ranks, a.ops, a.bytes);
    }
  }
  return out;
}

}  // namespace stg::report
