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

#include "stg/tools/trace_reader.h"
#include "stg/tools/trace_set.h"

namespace stg::tools {
namespace {

enum Kind : uint8_t { kOther, kCompute, kSend, kRecv, kColl };

struct RankGraph {
  std::vector<uint8_t> kind;
  std::vector<double> time;  // compute: roofline ns; send/coll: transfer ns
  std::vector<int64_t> peer, tag, size;
  std::vector<std::string> group;
  std::vector<std::vector<uint32_t>> children;
  std::vector<uint64_t> ids;       // with a timeline only
  std::vector<std::string> names;  // with a timeline only
  std::vector<uint32_t> remaining;
  bool ok = false;
  std::string error;
};

bool is_world(const std::string& g) { return g.empty() || g == "0"; }

void read_rank(const std::string& path, const MakespanOptions& o, RankGraph& g) {
  TraceReader reader;
  if (!reader.open(path)) {
    g.error = reader.error();
    return;
  }
  std::vector<uint64_t> ids;
  std::vector<std::vector<uint64_t>> deps;
  TraceNode t;
  while (reader.next(t)) {
    ids.push_back(t.id);
    deps.emplace_back(t.data_deps);
    deps.back().insert(deps.back().end(), t.ctrl_deps.begin(), t.ctrl_deps.end());
    Kind k = kOther;
    if (t.kind == NodeKind::kComp) k = kCompute;
    if (t.kind == NodeKind::kSend) k = kSend;
    if (t.kind == NodeKind::kRecv) k = kRecv;
    if (t.kind == NodeKind::kColl) k = kColl;
    g.kind.push_back(k);
    const int64_t size = t.comm_size.value_or(0);
    double time = 0;
    if (k == kCompute && t.tensor_size.value_or(0) > 0)
      time = static_cast<double>(
          roofline_ns(static_cast<uint64_t>(std::max<int64_t>(t.num_ops.value_or(0), 0)),
                      *t.tensor_size, o.roofline));
    if (k == kSend || k == kColl)
      time = static_cast<double>(size) / o.link_gbps;  // B / (GB/s) = ns
    g.time.push_back(time);
    g.peer.push_back(k == kSend ? t.comm_dst.value_or(-1) : t.comm_src.value_or(-1));
    g.tag.push_back(t.comm_tag.value_or(0));
    g.size.push_back(size);
    g.group.push_back(k == kColl ? t.group.value_or("") : "");
    if (o.timeline) {
      g.ids.push_back(t.id);
      g.names.push_back(t.name);
    }
  }
  if (!reader.error().empty()) {
    g.error = reader.error();
    return;
  }
  std::unordered_map<uint64_t, uint32_t> index;
  for (size_t i = 0; i < ids.size(); ++i) index.emplace(ids[i], static_cast<uint32_t>(i));
  g.children.resize(ids.size());
  g.remaining.assign(ids.size(), 0);
  for (size_t i = 0; i < ids.size(); ++i)
    for (uint64_t d : deps[i]) {
      const auto it = index.find(d);
      if (it == index.end()) {
        g.error = path + ": dependency " + std::to_string(d) + " is missing";
        return;
      }
      g.children[it->second].push_back(static_cast<uint32_t>(i));
      ++g.remaining[i];
    }
  g.ok = true;
}

// The timed run over all ranks.
class Run {
 public:
  Run(std::vector<RankGraph>& ranks, const CommGroups& groups, bool timeline)
      : g_(ranks), timeline_(timeline) {
    const auto n = static_cast<int64_t>(ranks.size());
    for (const auto& [id, members] : groups.groups) members_[id] = members;
    for (int64_t r = 0; r < n; ++r) world_.push_back(r);
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
    for (size_t r = 0; r < g_.size(); ++r) {
      for (uint32_t i = 0; i < g_[r].kind.size(); ++i)
        if (state_[r].done[i] < 0) {
          out.completed = false;
          out.error = "rank " + std::to_string(r) + " node " + std::to_string(i) +
                      " never done in the timed run";
          return out;
        }
      double compute = 0;
      for (uint32_t i = 0; i < g_[r].kind.size(); ++i)
        if (g_[r].kind[i] == kCompute) compute += g_[r].time[i];
      out.end_ns.push_back(state_[r].end);
      out.compute_ns.push_back(compute);
      out.makespan_ns = std::max(out.makespan_ns, state_[r].end);
    }
    for (size_t r = 0; r < g_.size(); ++r)
      out.idle_ns.push_back(out.makespan_ns - out.compute_ns[r]);
    if (timeline_) add_timeline(out.timeline);
    return out;
  }

 private:
  using MinHeap = std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>>;
  void add_timeline(std::vector<TimelineEvent>& events) const {
    for (size_t r = 0; r < g_.size(); ++r)
      for (uint32_t i = 0; i < g_[r].kind.size(); ++i) {
        const uint8_t k = g_[r].kind[i];
        const bool comm = k == kSend || k == kRecv || k == kColl;
        events.push_back({static_cast<int64_t>(r), g_[r].ids[i], g_[r].names[i],
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
      case kCompute:
        state_[r].compute.push(i);
        break;
      case kSend:
      case kColl:
        state_[r].comm.push(i);
        break;
      case kRecv: {
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
      if (g.kind[i] == kSend) {
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
    if (g.kind[i] == kCompute) s.compute_busy = false;
    if (g.kind[i] == kSend || g.kind[i] == kColl) s.comm_busy = false;
    if (g.kind[i] == kSend) {
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
  const bool timeline_;
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

std::string ns(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

}  // namespace

MakespanResult makespan_dir(const std::string& dir, const std::string& comm_group_file,
                            const MakespanOptions& options, int threads) {
  MakespanResult out;
  TraceSet set;
  if (!set.open(dir, comm_group_file) || !set.read_comm_groups()) {
    out.error = set.error();
    return out;
  }
  std::vector<RankGraph> ranks(static_cast<size_t>(set.ranks()));
  set.for_each_rank(threads, [&](int64_t rank, const std::string& path) {
    read_rank(path, options, ranks[static_cast<size_t>(rank)]);
  });
  for (size_t r = 0; r < ranks.size(); ++r)
    if (!ranks[r].ok) {
      out.error =
          ranks[r].error.empty() ? "rank " + std::to_string(r) + " has no trace" : ranks[r].error;
      return out;
    }
  return Run(ranks, set.comm_groups(), options.timeline).run();
}

std::string makespan_summary(const MakespanResult& r) {
  if (!r.error.empty()) return "makespan: not measured: " + r.error + "\n";
  std::string out = "makespan: " + ns(r.makespan_ns) +
                    " ns (compute at roofline, messages at "
                    "--link_gbps)\n";
  if (r.idle_ns.size() <= 32) {
    out += "compute idle per rank (ns):";
    for (double v : r.idle_ns) out += " " + ns(v);
    out += "\n";
  } else {
    std::vector<double> idle = r.idle_ns;
    std::sort(idle.begin(), idle.end());
    out += "compute idle per rank (ns): least " + ns(idle.front()) + ", median " +
           ns(idle[idle.size() / 2]) + ", largest " + ns(idle.back()) + "\n";
  }
  return out;
}

}  // namespace stg::tools
