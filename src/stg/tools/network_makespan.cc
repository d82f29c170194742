#include "stg/tools/network_makespan.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "stg/tools/astra_sim_network.h"
#include "stg/tools/network_calendar.h"
#include "stg/tools/ring_collectives.h"
#include "stg/tools/time_breakdown.h"

namespace stg::tools {

namespace {

// ASTRA-sim's tags of native sends and receives: the trace's modulo 5e8.
constexpr int64_t kNativeTags = 500000000;

bool collective_kind(int8_t coll, CollectiveKind& kind) {
  switch (coll) {
    case kCollAllReduce:
      kind = CollectiveKind::kAllReduce;
      return true;
    case kCollAllGather:
      kind = CollectiveKind::kAllGather;
      return true;
    case kCollReduceScatter:
      kind = CollectiveKind::kReduceScatter;
      return true;
    case kCollAllToAll:
      kind = CollectiveKind::kAllToAll;
      return true;
    default:
      return false;
  }
}

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

class NetworkRun {
 public:
  NetworkRun(std::vector<RankGraph>& ranks, std::vector<int64_t> chosen, const CommGroups& groups,
             const MakespanOptions& options)
      : g_(ranks),
        chosen_(std::move(chosen)),
        groups_file_(groups),
        options_(options),
        network_(*options.network),
        calendar_(network_),
        rings_(network_, calendar_, chosen_, [this](uint32_t r) { collective_done(r); }) {
    for (const auto& [id, members] : groups.groups) groups_[id] = members;
    state_.resize(g_.size());
  }

  MakespanResult run() {
    for (uint32_t r = 0; r < g_.size(); ++r) start_rank(r);
    for (uint32_t r = 0; r < g_.size(); ++r) issue_ready(r);
    SimCall call;
    while (error_.empty() && calendar_.next(call)) dispatch(call);
    return result();
  }

 private:
  struct RankState {
    std::set<std::pair<uint64_t, uint32_t>> compute, comm, other;  // ready (id, node)
    bool compute_busy = false, comm_busy = false;
    std::vector<double> start, done;
    int64_t left = 0;
    double end = 0;
    uint32_t collective = 0;  // the collective node in flight
  };

  void start_rank(uint32_t r) {
    RankState& s = state_[r];
    const size_t n = g_[r].kind.size();
    s.start.assign(n, 0);
    s.done.assign(n, -1);
    s.left = static_cast<int64_t>(n);
    for (uint32_t i = 0; i < n; ++i)
      if (g_[r].remaining[i] == 0) ready(r, i);
  }

  void ready(uint32_t r, uint32_t node) {
    RankState& s = state_[r];
    const std::pair<uint64_t, uint32_t> key{g_[r].ids[node], node};
    switch (g_[r].kind[node]) {
      case kComputeNode:
        s.compute.insert(key);
        break;
      case kSendNode:
      case kCollNode:
        s.comm.insert(key);
        break;
      default:
        s.other.insert(key);
    }
  }

  // ASTRA-sim's issue loop: the ready nodes in id order, each whose resource
  // is free (the lowest compute, the lowest SEND or collective, every RECV).
  void issue_ready(uint32_t r) {
    RankState& s = state_[r];
    std::vector<std::pair<uint64_t, uint32_t>> chosen(s.other.begin(), s.other.end());
    s.other.clear();
    if (!s.compute_busy && !s.compute.empty()) {
      chosen.push_back(*s.compute.begin());
      s.compute.erase(s.compute.begin());
    }
    if (!s.comm_busy && !s.comm.empty()) {
      chosen.push_back(*s.comm.begin());
      s.comm.erase(s.comm.begin());
    }
    std::sort(chosen.begin(), chosen.end());
    for (const auto& [id, node] : chosen) issue(r, node);
  }

  void issue(uint32_t r, uint32_t node) {
    RankState& s = state_[r];
    const RankGraph& g = g_[r];
    s.start[node] = static_cast<double>(calendar_.now());
    const SimCall done{kNodeDone, 0, r, node};
    const int64_t me = chosen_[r];
    switch (g.kind[node]) {
      case kComputeNode:
        s.compute_busy = true;
        calendar_.at_rank(r, static_cast<uint64_t>(g.time[node]), done);
        break;
      case kSendNode:
        s.comm_busy = true;
        calendar_.send(me, chosen_[g.peer[node]], static_cast<uint64_t>(g.size[node]),
                       g.tag[node] % kNativeTags, done);
        break;
      case kRecvNode:
        calendar_.recv(chosen_[g.peer[node]], me, static_cast<uint64_t>(g.size[node]),
                       g.tag[node] % kNativeTags, done);
        break;
      case kCollNode:
        s.comm_busy = true;
        start_collective(r, node);
        break;
      default:  // ends at once; what it frees is issued with the next event
        finish(r, node);
    }
  }

  void start_collective(uint32_t r, uint32_t node) {
    const RankGraph& g = g_[r];
    state_[r].collective = node;
    CollectiveKind kind;
    if (!collective_kind(g.coll[node], kind))
      return fail(r, node,
                  "a collective type ASTRA-sim "
                  "does not run");
    const std::string& group = g.group[node];
    std::vector<int64_t> members;
    int64_t group_id = -1;
    if (!group.empty() && group != "0") {
      const auto it = groups_.find(group);
      if (it == groups_.end())
        return fail(r, node,
                    "group " + group +
                        " is not in the comm "
                        "group file");
      members = it->second;
      group_id = std::strtoll(group.c_str(), nullptr, 10);
      if (std::find(members.begin(), members.end(), chosen_[r]) == members.end())
        return fail(r, node, "group " + group + " does not hold the rank");
    }
    const CollectivePlan plan =
        plan_collective(network_, chosen_[r], kind, static_cast<uint64_t>(g.size[node]), members);
    if (plan.chunks == 0)
      return fail(r, node,
                  "an all-gather of fewer bytes than preferred-dataset-splits, which "
                  "ASTRA-sim never completes");
    rings_.start(r, plan, group_id);
  }

  void fail(uint32_t r, uint32_t node, const std::string& why) {
    error_ = "rank " + std::to_string(chosen_[r]) + " node " + std::to_string(g_[r].ids[node]) +
             ": " + why;
  }

  void collective_done(uint32_t r) { node_done(r, state_[r].collective); }

  // Node `node` ends now: its children may become ready.
  void finish(uint32_t r, uint32_t node) {
    RankState& s = state_[r];
    RankGraph& g = g_[r];
    s.done[node] = static_cast<double>(calendar_.now());
    s.end = std::max(s.end, s.done[node]);
    --s.left;
    for (uint32_t c : g.children[node])
      if (--g.remaining[c] == 0) ready(r, c);
  }

  // ASTRA-sim's Workload::call: free the node's resource, end it, issue.
  void node_done(uint32_t r, uint32_t node) {
    const uint8_t k = g_[r].kind[node];
    if (k == kComputeNode) state_[r].compute_busy = false;
    if (k == kSendNode || k == kCollNode) state_[r].comm_busy = false;
    finish(r, node);
    issue_ready(r);
  }

  void dispatch(const SimCall& call) {
    switch (call.kind) {
      case kNodeDone:
        node_done(call.rank, call.index);
        break;
      case kPacketReady:
        rings_.packet_ready(call.rank, call.index, call.flag != 0);
        break;
      case kRingReceive:
        rings_.ring_receive(call.rank, call.index);
        break;
      default:
        break;
    }
  }

  MakespanResult result() const;

  std::vector<RankGraph>& g_;
  const std::vector<int64_t> chosen_;
  const CommGroups& groups_file_;
  const MakespanOptions& options_;
  const AstraSimNetwork network_;
  NetworkCalendar calendar_;
  RingCollectives rings_;
  std::map<std::string, std::vector<int64_t>> groups_;
  std::vector<RankState> state_;
  std::string error_;
};

MakespanResult NetworkRun::result() const {
  MakespanResult out;
  out.network =
      std::string(network_.config().system.roofline_enabled ? "compute at the system's roofline"
                                                            : "compute from duration_micros") +
      ", messages on ASTRA-sim's network: " + file_name(network_.config().network_file) + ", " +
      file_name(network_.config().system_file);
  out.error = error_;
  out.ranks = chosen_;
  for (size_t r = 0; r < g_.size() && out.error.empty(); ++r)
    for (size_t i = 0; i < g_[r].kind.size(); ++i)
      if (state_[r].done[i] < 0) {
        out.error = "rank " + std::to_string(chosen_[r]) + " node " + std::to_string(g_[r].ids[i]) +
                    " never done in the timed run";
        break;
      }
  if (!out.error.empty()) return out;
  out.completed = true;
  for (size_t r = 0; r < g_.size(); ++r) {
    double compute = 0;
    for (size_t i = 0; i < g_[r].kind.size(); ++i)
      if (g_[r].kind[i] == kComputeNode) compute += g_[r].time[i];
    out.end_ns.push_back(state_[r].end);
    out.compute_ns.push_back(compute);
    out.makespan_ns = std::max(out.makespan_ns, state_[r].end);
  }
  for (size_t r = 0; r < g_.size(); ++r) out.idle_ns.push_back(out.makespan_ns - out.compute_ns[r]);
  if (options_.breakdown_ranks_per_stage > 0) {
    const CommAxisNames axes(groups_file_, chosen_, options_.breakdown_ranks_per_stage);
    std::vector<NodeTimes> times;
    for (const RankState& st : state_) times.push_back({&st.start, &st.done});
    out.breakdown = time_breakdowns(g_, times, axes, out.makespan_ns);
  }
  if (options_.timeline)
    for (size_t r = 0; r < g_.size(); ++r)
      for (size_t i = 0; i < g_[r].kind.size(); ++i) {
        const uint8_t k = g_[r].kind[i];
        const bool comm = k == kSendNode || k == kRecvNode || k == kCollNode;
        out.timeline.push_back({chosen_[r], g_[r].ids[i], g_[r].names[i],
                                comm ? TimelineTrack::kCommunication : TimelineTrack::kCompute,
                                state_[r].start[i], state_[r].done[i]});
      }
  return out;
}

}  // namespace

MakespanResult network_makespan(std::vector<RankGraph>& ranks, std::vector<int64_t> chosen,
                                const CommGroups& groups, const MakespanOptions& options) {
  return NetworkRun(ranks, std::move(chosen), groups, options).run();
}

}  // namespace stg::tools
