#include "stg/tools/makespan.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "stg/tools/network_makespan.h"
#include "stg/tools/rank_graph.h"
#include "stg/tools/time_breakdown.h"
#include "stg/tools/trace_set.h"

namespace stg::tools {
namespace {

bool is_world(const std::string& g) { return g.empty() || g == "0"; }

// The timed run over the ranks `chosen` (ascending; ranks[k] is rank
// chosen[k], its peers indices into chosen): a group's members that are not
// run count as having issued its collectives with those that are.
class Run {
 public:
  Run(std::vector<RankGraph>& ranks, std::vector<int64_t> chosen, const CommGroups& groups,
      const MakespanOptions& options)
      : g_(ranks),
        chosen_(std::move(chosen)),
        groups_(groups),
        timeline_(options.timeline),
        breakdown_ranks_per_stage_(options.breakdown_ranks_per_stage) {
    for (const auto& [id, members] : groups.groups) {
      std::vector<int64_t>& run = members_[id];
      for (int64_t m : members) {
        const auto it = std::lower_bound(chosen_.begin(), chosen_.end(), m);
        if (it != chosen_.end() && *it == m) run.push_back(it - chosen_.begin());
      }
    }
    for (size_t r = 0; r < ranks.size(); ++r) world_.push_back(static_cast<int64_t>(r));
    state_.resize(ranks.size());
  }

  MakespanResult run() {
    for (size_t r = 0; r < g_.size(); ++r) {
      state_[r].done.assign(g_[r].kind.size(), -1);
      state_[r].start.assign(g_[r].kind.size(), 0);
      state_[r].end = 0;
      for (uint32_t i = 0; i < g_[r].kind.size(); ++i)
        if (g_[r].remaining[i] == 0) ready(r, i, 0);
    }
    for (size_t r = 0; r < g_.size(); ++r) issue(r, 0);
    while (!events_.empty()) {
      const auto [t, r, i] = events_.top();
      events_.pop();
      finish(r, i, t);
    }
    MakespanResult out;
    out.completed = true;
    out.ranks = chosen_;
    for (size_t r = 0; r < g_.size(); ++r) {
      for (uint32_t i = 0; i < g_[r].kind.size(); ++i)
        if (state_[r].done[i] < 0) {
          out.completed = false;
          out.error = "rank " + std::to_string(chosen_[r]) + " node " + std::to_string(i) +
                      " never done in the timed run";
          return out;
        }
      double compute = 0;
      for (uint32_t i = 0; i < g_[r].kind.size(); ++i)
        if (g_[r].kind[i] == kComputeNode) compute += g_[r].time[i];
      out.end_ns.push_back(state_[r].end);
      out.compute_ns.push_back(compute);
      out.makespan_ns = std::max(out.makespan_ns, state_[r].end);
    }
    for (size_t r = 0; r < g_.size(); ++r)
      out.idle_ns.push_back(out.makespan_ns - out.compute_ns[r]);
    if (timeline_) add_timeline(out.timeline);
    if (breakdown_ranks_per_stage_ > 0) {
      const CommAxisNames axes(groups_, chosen_, breakdown_ranks_per_stage_);
      std::vector<NodeTimes> times;
      for (const RankState& st : state_) times.push_back({&st.start, &st.done});
      out.breakdown = time_breakdowns(g_, times, axes, out.makespan_ns);
    }
    return out;
  }

 private:
  using MinHeap = std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>>;
  void add_timeline(std::vector<TimelineEvent>& events) const {
    for (size_t r = 0; r < g_.size(); ++r)
      for (uint32_t i = 0; i < g_[r].kind.size(); ++i) {
        const uint8_t k = g_[r].kind[i];
        const bool comm = k == kSendNode || k == kRecvNode || k == kCollNode;
        events.push_back({chosen_[r], g_[r].ids[i], g_[r].names[i],
                          comm ? TimelineTrack::kCommunication : TimelineTrack::kCompute,
                          state_[r].start[i], state_[r].done[i]});
      }
  }

  struct RankState {
    std::vector<double> done, start;
    MinHeap compute, comm;
    bool compute_busy = false, comm_busy = false;
    std::map<std::string, int64_t> next_position;  // per group: collectives issued
    double end = 0;
  };
  struct Pending {  // a collective position: issued by some members
    int64_t issued = 0;
    double latest = 0;
    std::vector<std::pair<size_t, uint32_t>> nodes;
  };
  using Channel = std::tuple<int64_t, int64_t, int64_t, int64_t>;  // src, dst, tag, size

  const std::vector<int64_t>& members(const std::string& group) const {
    if (is_world(group)) return world_;
    const auto it = members_.find(group);
    return it == members_.end() ? empty_ : it->second;
  }

  void at(double t, size_t r, uint32_t i) { events_.emplace(t, r, i); }

  // Node i of rank r has all its dependencies done at time t.
  void ready(size_t r, uint32_t i, double t) {
    RankGraph& g = g_[r];
    switch (g.kind[i]) {
      case kComputeNode:
        state_[r].compute.push(i);
        break;
      case kSendNode:
      case kCollNode:
        state_[r].comm.push(i);
        break;
      case kRecvNode: {
        state_[r].start[i] = t;
        const Channel c{g.peer[i], static_cast<int64_t>(r), g.tag[i], g.size[i]};
        auto& sent = sent_[c];
        if (!sent.empty()) {
          sent.pop_front();
          at(t, r, i);
        } else {
          waiting_[c].push_back(i);
        }
        break;
      }
      default:
        state_[r].start[i] = t;
        at(t, r, i);
    }
  }

  void issue(size_t r, double t) {
    RankState& s = state_[r];
    RankGraph& g = g_[r];
    if (!s.compute_busy && !s.compute.empty()) {
      const uint32_t i = s.compute.top();
      s.compute.pop();
      s.compute_busy = true;
      s.start[i] = t;
      at(t + g.time[i], r, i);
    }
    if (!s.comm_busy && !s.comm.empty()) {
      const uint32_t i = s.comm.top();
      s.comm.pop();
      s.comm_busy = true;
      s.start[i] = t;
      if (g.kind[i] == kSendNode) {
        at(t + g.time[i], r, i);
        return;
      }
      const std::string& group = g.group[i];
      const int64_t pos = s.next_position[group]++;
      Pending& p = pending_[{group, pos}];
      ++p.issued;
      p.latest = std::max(p.latest, t);
      p.nodes.emplace_back(r, i);
      if (p.issued == static_cast<int64_t>(members(group).size())) {
        for (const auto& [rank, node] : p.nodes) at(p.latest + g.time[i], rank, node);
        pending_.erase({group, pos});
      }
    }
  }

  void finish(size_t r, uint32_t i, double t) {
    RankState& s = state_[r];
    RankGraph& g = g_[r];
    s.done[i] = t;
    s.end = std::max(s.end, t);
    if (g.kind[i] == kComputeNode) s.compute_busy = false;
    if (g.kind[i] == kSendNode || g.kind[i] == kCollNode) s.comm_busy = false;
    if (g.kind[i] == kSendNode) {
      const size_t dst = static_cast<size_t>(g.peer[i]);
      const Channel c{static_cast<int64_t>(r), g.peer[i], g.tag[i], g.size[i]};
      auto& waiting = waiting_[c];
      if (!waiting.empty()) {
        const uint32_t recv = waiting.front();
        waiting.pop_front();
        at(t, dst, recv);
      } else {
        sent_[c].push_back(t);
      }
    }
    for (uint32_t c : g.children[i])
      if (--g.remaining[c] == 0) ready(r, c, t);
    issue(r, t);
  }

  std::vector<RankGraph>& g_;
  const std::vector<int64_t> chosen_;
  const CommGroups& groups_;
  const bool timeline_;
  const int64_t breakdown_ranks_per_stage_;
  std::vector<RankState> state_;
  std::map<std::string, std::vector<int64_t>> members_;
  std::vector<int64_t> world_, empty_;
  std::map<std::pair<std::string, int64_t>, Pending> pending_;
  std::map<Channel, std::deque<double>> sent_;
  std::map<Channel, std::deque<uint32_t>> waiting_;
  // (time, rank, node): earliest first, then the lower rank and node.
  std::priority_queue<std::tuple<double, size_t, uint32_t>,
                      std::vector<std::tuple<double, size_t, uint32_t>>, std::greater<>>
      events_;
};

// How the run charged time.
std::string model(const MakespanResult& r) {
  if (r.network.empty())
    return r.durations ? "compute from duration_micros, messages at --link_gbps"
                       : "compute at roofline, messages at --link_gbps";
  return r.network;
}

std::string ns(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

// " a b c" for up to 32 values, else ": least a, median b, largest c".
std::string listed(std::vector<double> values) {
  std::string out;
  if (values.size() <= 32) {
    for (double v : values) out += " " + ns(v);
    return out;
  }
  std::sort(values.begin(), values.end());
  return ": least " + ns(values.front()) + ", median " + ns(values[values.size() / 2]) +
         ", largest " + ns(values.back());
}

// The chosen ranks' traces read and run (with `add_peers`, and the ranks
// their SENDs and RECVs reach).
MakespanResult run_ranks(const TraceSet& set, std::vector<int64_t> chosen,
                         const MakespanOptions& options, int threads, bool add_peers = false) {
  MakespanResult out;
  std::vector<RankGraph> ranks;
  if (options.network && options.network->npus() != set.ranks()) {
    out.error = options.network->network_file + " has " + std::to_string(options.network->npus()) +
                " NPUs but the traces have " + std::to_string(set.ranks()) + " ranks";
    return out;
  }
  if (!read_rank_graphs(set, chosen, ranks, add_peers, options, threads, out.error)) return out;
  if (options.network)
    return network_makespan(ranks, std::move(chosen), set.comm_groups(), options);
  MakespanResult run = Run(ranks, std::move(chosen), set.comm_groups(), options).run();
  run.durations = options.durations;
  return run;
}

bool open_set(TraceSet& set, const std::string& dir, const std::string& comm_group_file,
              std::string& error) {
  if (set.open(dir, comm_group_file) && set.read_comm_groups()) return true;
  error = set.error();
  return false;
}

}  // namespace

MakespanResult makespan_dir(const std::string& dir, const std::string& comm_group_file,
                            const MakespanOptions& options, int threads) {
  MakespanResult out;
  TraceSet set;
  if (!open_set(set, dir, comm_group_file, out.error)) return out;
  std::vector<int64_t> all(static_cast<size_t>(set.ranks()));
  for (size_t r = 0; r < all.size(); ++r) all[r] = static_cast<int64_t>(r);
  return run_ranks(set, std::move(all), options, threads);
}

MakespanResult makespan_by_stage(const std::string& dir, const std::string& comm_group_file,
                                 int64_t stages, const MakespanOptions& options, int threads) {
  MakespanResult out;
  TraceSet set;
  if (!open_set(set, dir, comm_group_file, out.error)) return out;
  const int64_t n = set.ranks();
  if (stages < 1 || n % stages != 0) {
    out.error = std::to_string(n) + " ranks are not " + std::to_string(stages) +
                " pipeline stages of as many ranks each";
    return out;
  }
  std::vector<int64_t> first(static_cast<size_t>(stages));
  for (int64_t s = 0; s < stages; ++s) first[static_cast<size_t>(s)] = s * (n / stages);
  MakespanOptions with_breakdown = options;
  with_breakdown.breakdown_ranks_per_stage = n / stages;
  out = run_ranks(set, first, with_breakdown, threads, /*add_peers=*/true);
  if (!out.completed) return out;
  // The figures of the stages' first ranks; the makespan is over every rank run.
  out.ranks_run = static_cast<int64_t>(out.ranks.size());
  std::vector<double> end, compute, idle;
  std::vector<TimeBreakdown> breakdown;
  for (int64_t rank : first) {
    const size_t k = static_cast<size_t>(
        std::lower_bound(out.ranks.begin(), out.ranks.end(), rank) - out.ranks.begin());
    end.push_back(out.end_ns[k]);
    compute.push_back(out.compute_ns[k]);
    idle.push_back(out.idle_ns[k]);
    breakdown.push_back(out.breakdown[k]);
  }
  out.breakdown = std::move(breakdown);
  out.ranks = std::move(first);
  out.end_ns = std::move(end);
  out.compute_ns = std::move(compute);
  out.idle_ns = std::move(idle);
  return out;
}

std::string makespan_summary(const MakespanResult& r) {
  if (!r.error.empty()) return "makespan: not measured: " + r.error + "\n";
  std::string out = "makespan: " + ns(r.makespan_ns) + " ns (" + model(r) + ")\n";
  // On a network, what ASTRA-sim prints as "sys[R] finished, T cycles".
  if (!r.network.empty())
    out += "finish per rank (ns)" + std::string(r.end_ns.size() <= 32 ? ":" : "") +
           listed(r.end_ns) + "\n";
  return out + "compute idle per rank (ns)" + (r.idle_ns.size() <= 32 ? ":" : "") +
         listed(r.idle_ns) + "\n";
}

std::string makespan_by_stage_summary(const MakespanResult& r) {
  if (!r.error.empty()) return "makespan: not measured: " + r.error + "\n";
  std::string out = "makespan: " + ns(r.makespan_ns) + " ns over one rank per pipeline stage";
  if (r.ranks_run > static_cast<int64_t>(r.ranks.size())) {
    out += " with the peers of its rings (";
    out += std::to_string(r.ranks_run);
    out += " ranks run)";
  }
  out += " (" + model(r) + ")\n";
  if (!r.network.empty())
    out += "finish per stage (ns)" + std::string(r.end_ns.size() <= 32 ? ":" : "") +
           listed(r.end_ns) + "\n";
  out += "compute idle per stage (ns)" + std::string(r.idle_ns.size() <= 32 ? ":" : "") +
         listed(r.idle_ns);
  if (!r.idle_ns.empty() && r.makespan_ns > 0) {
    const double largest = *std::max_element(r.idle_ns.begin(), r.idle_ns.end());
    char share[64];
    std::snprintf(share, sizeof share, " (largest %.0f, %.1f%% of the makespan)", largest,
                  100.0 * largest / r.makespan_ns);
    out += share;
  }
  return out + "\n";
}

}  // namespace stg::tools
