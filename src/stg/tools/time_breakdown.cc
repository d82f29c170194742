#include "stg/tools/time_breakdown.h"

#include <algorithm>
#include <tuple>

#include "stg/mesh/axes.h"
#include "stg/tools/group_axes.h"

namespace stg::tools {
namespace {

// A mesh axis within a stage (mesh/axes.h), whose groups a point-to-point
// ring runs along.
bool is_spatial(const std::string& axis) {
  for (const char* label : mesh::mesh_labels())
    if (axis == label) return true;
  return false;
}

// What holds the rank at a moment, in the order that wins: compute, the
// communication slot, a RECV along an axis; a RECV from another stage is
// the bubble.
enum Holder : uint8_t { kCompute, kSlot, kAxisRecv, kStageRecv };

}  // namespace

CommAxisNames::CommAxisNames(const CommGroups& groups, const std::vector<int64_t>& chosen,
                             int64_t ranks_per_stage)
    : group_axis_(group_axes(groups, ranks_per_stage)),
      chosen_(chosen),
      ranks_per_stage_(std::max<int64_t>(1, ranks_per_stage)) {
  for (const auto& [id, members] : groups.groups) {
    const std::string& axis = group_axis_[id];
    if (!is_spatial(axis)) continue;
    std::vector<int64_t> sorted = members;
    std::sort(sorted.begin(), sorted.end());
    spatial_.emplace_back(axis, std::move(sorted));
  }
}

std::string CommAxisNames::of(const RankGraph& g, size_t r, uint32_t i) const {
  switch (g.kind[i]) {
    case kCollNode: {
      const auto it = group_axis_.find(g.group[i]);
      return it == group_axis_.end() ? "other" : it->second;
    }
    case kSendNode:
    case kRecvNode: {
      const int64_t me = chosen_[r];
      const int64_t peer = chosen_[static_cast<size_t>(g.peer[i])];
      if (me / ranks_per_stage_ != peer / ranks_per_stage_) return "pp";
      for (const auto& [axis, members] : spatial_)
        if (std::binary_search(members.begin(), members.end(), me) &&
            std::binary_search(members.begin(), members.end(), peer))
          return axis + " p2p";
      return "other p2p";
    }
    default:
      return "";
  }
}

namespace {

// When the last member run issued each collective node of each rank: the
// k-th collective of a group on each rank (in issue order) is one
// collective.
std::vector<std::vector<double>> last_issue(const std::vector<RankGraph>& g,
                                            const std::vector<NodeTimes>& times) {
  std::vector<std::vector<std::pair<std::string, size_t>>> key(g.size());
  std::map<std::pair<std::string, size_t>, double> latest;
  for (size_t r = 0; r < g.size(); ++r) {
    std::vector<std::pair<double, uint32_t>> issued;  // (start, node)
    for (uint32_t i = 0; i < g[r].kind.size(); ++i)
      if (g[r].kind[i] == kCollNode) issued.emplace_back((*times[r].start)[i], i);
    std::sort(issued.begin(), issued.end());
    std::map<std::string, size_t> position;
    key[r].resize(g[r].kind.size());
    for (const auto& [t, i] : issued) {
      key[r][i] = {g[r].group[i], position[g[r].group[i]]++};
      double& last = latest[key[r][i]];
      last = std::max(last, t);
    }
  }
  std::vector<std::vector<double>> out(g.size());
  for (size_t r = 0; r < g.size(); ++r) {
    out[r].assign(g[r].kind.size(), 0);
    for (uint32_t i = 0; i < g[r].kind.size(); ++i)
      if (g[r].kind[i] == kCollNode) out[r][i] = latest[key[r][i]];
  }
  return out;
}

// One rank's breakdown; `from[i]`: when node i starts to count.
TimeBreakdown rank_breakdown(const RankGraph& g, size_t r, const std::vector<double>& from,
                             const std::vector<double>& done, const CommAxisNames& axes,
                             double makespan_ns) {
  // Interval ends as (time, +1 / -1, holder, axis index).
  std::vector<std::string> names;
  const auto index = [&](const std::string& name) {
    const auto it = std::find(names.begin(), names.end(), name);
    if (it != names.end()) return static_cast<size_t>(it - names.begin());
    names.push_back(name);
    return names.size() - 1;
  };
  std::vector<std::tuple<double, int, Holder, size_t>> ends;
  for (uint32_t i = 0; i < g.kind.size(); ++i) {
    if (done[i] <= from[i]) continue;
    Holder holder = kCompute;
    size_t axis = 0;
    if (g.kind[i] == kSendNode || g.kind[i] == kCollNode || g.kind[i] == kRecvNode) {
      const std::string name = axes.of(g, r, i);
      axis = index(name);
      holder = g.kind[i] != kRecvNode ? kSlot : name == "pp" ? kStageRecv : kAxisRecv;
    } else if (g.kind[i] != kComputeNode) {
      continue;
    }
    ends.emplace_back(from[i], +1, holder, axis);
    ends.emplace_back(done[i], -1, holder, axis);
  }
  std::sort(ends.begin(), ends.end());
  // Open intervals by holder and axis.
  int computing = 0;
  std::vector<int> slot, axis_recv;
  TimeBreakdown out;
  const auto first_open = [](const std::vector<int>& open) {
    for (size_t a = 0; a < open.size(); ++a)
      if (open[a] > 0) return static_cast<int64_t>(a);
    return int64_t{-1};
  };
  const auto charge = [&](double begin, double end) {
    if (end <= begin) return;
    int64_t a = -1;
    if (computing > 0)
      out.compute_ns += end - begin;
    else if ((a = first_open(slot)) >= 0 || (a = first_open(axis_recv)) >= 0)
      out.exposed_comm_ns[names[static_cast<size_t>(a)]] += end - begin;
    else
      out.bubble_ns += end - begin;
  };
  double now = 0;
  for (const auto& [t, step, holder, axis] : ends) {
    charge(now, t);
    now = std::max(now, t);
    if (holder == kCompute) computing += step;
    if (holder == kSlot || holder == kAxisRecv) {
      std::vector<int>& open = holder == kSlot ? slot : axis_recv;
      if (open.size() <= axis) open.resize(axis + 1, 0);
      open[axis] += step;
    }
  }
  charge(now, makespan_ns);
  return out;
}

}  // namespace

std::vector<TimeBreakdown> time_breakdowns(const std::vector<RankGraph>& g,
                                           const std::vector<NodeTimes>& times,
                                           const CommAxisNames& axes, double makespan_ns) {
  const std::vector<std::vector<double>> issued_by_all = last_issue(g, times);
  std::vector<TimeBreakdown> out;
  for (size_t r = 0; r < g.size(); ++r) {
    std::vector<double> from = *times[r].start;
    for (uint32_t i = 0; i < g[r].kind.size(); ++i)
      if (g[r].kind[i] == kCollNode) from[i] = std::max(from[i], issued_by_all[r][i]);
    out.push_back(rank_breakdown(g[r], r, from, *times[r].done, axes, makespan_ns));
  }
  return out;
}

}  // namespace stg::tools
