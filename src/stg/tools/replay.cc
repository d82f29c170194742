#include "stg/tools/replay.h"

#include <algorithm>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "stg/tools/p2p_key.h"
#include "stg/tools/trace_reader.h"
#include "stg/tools/trace_set.h"

namespace stg::tools {
namespace {

constexpr uint32_t kMissingDep = std::numeric_limits<uint32_t>::max();
constexpr uint32_t kNoNode = std::numeric_limits<uint32_t>::max();
constexpr size_t kMaxStuck = 10;  // entries of ReplayResult::stuck

enum Kind : uint8_t { kOther, kSend, kRecv, kColl };
enum State : uint8_t { kWaiting, kIssued, kDone };

// Communication attributes of one SEND / RECV / collective node.
struct CommInfo {
  int64_t peer = -1;  // SEND: dst, RECV: src
  int64_t tag = 0;
  int64_t size = 0;
  int type = -1;         // collective comm_type (-1 when absent)
  uint32_t missing = 0;  // MissingAttr bits
  int32_t channel = -1;  // SEND / RECV: index into Replay::channels (-1: unmatchable)
  int32_t group = -1;    // collective: index into Replay::groups
  int32_t member = -1;   // collective: member index of the rank in the group (-1: not one)
  int64_t pos = -1;      // collective: position in the rank's sequence on the group, once issued
};

// Compact graph of one rank plus its replay state.
struct RankGraph {
  bool present = false;
  std::vector<uint64_t> ids;
  std::string name_blob;
  std::vector<size_t> name_off;  // n + 1 offsets into name_blob
  std::vector<uint8_t> kind;
  std::vector<uint8_t> state;
  std::vector<uint32_t> remaining;  // deps not done (a missing id never is)
  std::vector<uint32_t> dep_start, deps;
  std::vector<std::pair<uint32_t, uint64_t>> missing_ids;  // (node, first missing id), by node
  std::vector<uint32_t> child_start, children;
  std::vector<int32_t> comm;  // index into comms, -1 for other nodes
  std::vector<CommInfo> comms;
  std::vector<std::string> comm_groups;  // per comm entry: group text (collectives), until resolved
  int64_t done = 0;
  // ASTRA-sim's one communication slot: SENDs and collectives that are
  // ready wait here (a min-heap on id) until the slot is free; the node that
  // holds the slot (a collective until it completes), or kNoNode.
  std::vector<uint32_t> slot_queue;
  uint32_t slot_holder = kNoNode;

  size_t size() const { return ids.size(); }
  std::string_view name(uint32_t i) const {
    return std::string_view(name_blob).substr(name_off[i], name_off[i + 1] - name_off[i]);
  }
};

// Reads one rank's file node by node into the compact form (the TraceNodes
// are not kept). False with `error` on a read error.
bool read_graph(const std::string& path, RankGraph& g, std::string& error) {
  TraceReader reader;
  if (!reader.open(path)) {
    error = reader.error();
    return false;
  }
  std::vector<uint64_t> dep_ids;  // as written, resolved below
  g.dep_start.push_back(0);
  g.name_off.push_back(0);
  TraceNode t;
  while (reader.next(t)) {
    g.ids.push_back(t.id);
    g.name_blob += t.name;
    g.name_off.push_back(g.name_blob.size());
    dep_ids.insert(dep_ids.end(), t.data_deps.begin(), t.data_deps.end());
    dep_ids.insert(dep_ids.end(), t.ctrl_deps.begin(), t.ctrl_deps.end());
    g.dep_start.push_back(static_cast<uint32_t>(dep_ids.size()));
    Kind k = kOther;
    if (t.kind == NodeKind::kSend) k = kSend;
    if (t.kind == NodeKind::kRecv) k = kRecv;
    if (t.kind == NodeKind::kColl) k = kColl;
    g.kind.push_back(k);
    if (k == kOther) {
      g.comm.push_back(-1);
      continue;
    }
    CommInfo c;
    c.missing = t.missing;
    c.size = t.comm_size.value_or(0);
    c.tag = t.comm_tag.value_or(0);
    if (k == kSend) c.peer = t.comm_dst.value_or(-1);
    if (k == kRecv) c.peer = t.comm_src.value_or(-1);
    if (k == kColl) c.type = t.comm_type.value_or(-1);
    g.comm.push_back(static_cast<int32_t>(g.comms.size()));
    g.comms.push_back(c);
    g.comm_groups.push_back(k == kColl ? t.group.value_or(std::string()) : std::string());
  }
  if (!reader.error().empty()) {
    error = reader.error();
    return false;
  }
  if (g.ids.size() >= kMissingDep || dep_ids.size() >= kMissingDep) {
    error = path + ": too many nodes or dependencies for the replay";
    return false;
  }

  const size_t n = g.ids.size();
  g.present = true;
  g.state.assign(n, kWaiting);
  g.remaining.assign(n, 0);
  std::unordered_map<uint64_t, uint32_t> index;
  index.reserve(n * 2);
  for (size_t i = 0; i < n; ++i)
    index.emplace(g.ids[i], static_cast<uint32_t>(i));  // first occurrence wins
  g.deps.resize(dep_ids.size());
  std::vector<uint32_t> child_count(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    g.remaining[i] = g.dep_start[i + 1] - g.dep_start[i];
    for (uint32_t k = g.dep_start[i]; k < g.dep_start[i + 1]; ++k) {
      auto it = index.find(dep_ids[k]);
      if (it == index.end()) {
        g.deps[k] = kMissingDep;
        if (g.missing_ids.empty() || g.missing_ids.back().first != i)
          g.missing_ids.emplace_back(static_cast<uint32_t>(i), dep_ids[k]);
      } else {
        g.deps[k] = it->second;
        ++child_count[it->second + 1];
      }
    }
  }
  for (size_t i = 0; i < n; ++i) child_count[i + 1] += child_count[i];
  g.child_start = child_count;
  g.children.resize(child_count[n]);
  std::vector<uint32_t> fill(child_count.begin(), child_count.end() - 1);
  for (size_t i = 0; i < n; ++i)
    for (uint32_t k = g.dep_start[i]; k < g.dep_start[i + 1]; ++k)
      if (g.deps[k] != kMissingDep) g.children[fill[g.deps[k]]++] = static_cast<uint32_t>(i);
  return true;
}

// Sends and receives of one (src, dst, tag, size).
struct Channel {
  P2PKey key;
  int64_t sends = 0, recvs = 0;  // in the files
  int64_t unmatched_sends = 0;   // issued, not yet taken by a receive
  std::deque<uint32_t> waiting;  // issued receives on dst (node indices), FIFO
};

// One position of a group's collective sequence.
struct Slot {
  int64_t arrived = 0;
  int type = -1;
  int64_t size = 0;
  bool mismatch = false;
  bool completed = false;
  std::vector<std::pair<int64_t, uint32_t>> waiters;  // (rank, node)
};

struct Group {
  std::string id;
  bool known = false;                              // world group or in the comm-group file
  std::vector<int64_t> members;                    // distinct, as listed
  std::vector<std::pair<int64_t, int32_t>> index;  // (rank, member index), sorted
  std::vector<int64_t> next_pos;                   // per member: collectives issued
  std::vector<Slot> slots;

  int32_t member_of(int64_t rank) const {
    auto it = std::lower_bound(index.begin(), index.end(), std::make_pair(rank, int32_t{-1}));
    return it != index.end() && it->first == rank ? it->second : -1;
  }
};

bool is_world_group(const std::string& g) { return g.empty() || g == "0"; }

std::string group_text(const std::string& g) {
  return is_world_group(g) ? "the world group" : "group " + g;
}

std::string rank_list(const std::vector<int64_t>& ranks, size_t show = 8) {
  std::string s;
  for (size_t i = 0; i < ranks.size() && i < show; ++i) {
    if (i) s += ',';
    s += std::to_string(ranks[i]);
  }
  if (ranks.size() > show) s += ",... (" + std::to_string(ranks.size()) + " ranks)";
  return s;
}

class Replay {
 public:
  ReplayResult run(const std::string& dir, const std::string& comm_group_file, int threads);

 private:
  bool load(const std::string& dir, const std::string& comm_group_file, int threads);
  void resolve();
  void simulate();
  void report();

  void deliver(int64_t rank, uint32_t node) {
    next_inbox_[static_cast<size_t>(rank)].push_back(node);
    if (!next_marked_[static_cast<size_t>(rank)]) {
      next_marked_[static_cast<size_t>(rank)] = 1;
      next_active_.push_back(rank);
    }
  }
  void phase(int64_t rank, const std::vector<uint32_t>& seeds, bool initial);
  void post_send(int64_t rank, uint32_t node);
  void issue_recv(int64_t rank, uint32_t node);
  void issue_coll(int64_t rank, uint32_t node);

  // Reporting.
  std::string node_ref(int64_t rank, uint32_t i) const;
  std::string describe(int64_t rank, uint32_t i) const;
  std::string blocker(int64_t rank, uint32_t i) const;
  std::string why_issued(int64_t rank, uint32_t i) const;
  std::string why_waiting(int64_t rank) const;
  bool has_file(int64_t rank) const {
    return rank >= 0 && rank < ranks_ && graphs_[static_cast<size_t>(rank)].present;
  }

  ReplayResult result_;
  int64_t ranks_ = 0;
  std::vector<RankGraph> graphs_;
  CommGroups comm_groups_;
  std::vector<Group> groups_;
  std::unordered_map<std::string, int32_t> group_index_;
  std::vector<Channel> channels_;

  std::vector<std::vector<uint32_t>> inbox_, next_inbox_;
  std::vector<int64_t> next_active_;
  std::vector<char> next_marked_;
  std::vector<uint32_t> stack_, ready_comm_;
};

bool Replay::load(const std::string& dir, const std::string& comm_group_file, int threads) {
  TraceSet set;
  if (!set.open(dir, comm_group_file) || !set.read_comm_groups()) {
    result_.error = set.error();
    return false;
  }
  comm_groups_ = set.comm_groups();
  ranks_ = set.ranks();
  result_.ranks = ranks_;
  graphs_.resize(static_cast<size_t>(ranks_));

  std::mutex mutex;
  std::vector<std::pair<int64_t, std::string>> errors;
  set.for_each_rank(threads, [&](int64_t rank, const std::string& path) {
    RankGraph g;
    std::string err;
    if (!read_graph(path, g, err)) {
      std::lock_guard lock(mutex);
      errors.emplace_back(rank, std::move(err));
      return;
    }
    graphs_[static_cast<size_t>(rank)] = std::move(g);
  });
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end());
    result_.error = errors.front().second;
    if (errors.size() > 1) result_.error += " (and " + std::to_string(errors.size() - 1) + " more)";
    return false;
  }
  for (const RankGraph& g : graphs_) result_.nodes_total += static_cast<int64_t>(g.size());
  return true;
}

// Groups and channels of all communication nodes.
void Replay::resolve() {
  auto add_group = [&](const std::string& id, const std::vector<int64_t>& members, bool known) {
    Group g;
    g.id = id;
    g.known = known;
    for (int64_t m : members) {
      if (std::find(g.members.begin(), g.members.end(), m) != g.members.end()) continue;
      g.index.emplace_back(m, static_cast<int32_t>(g.members.size()));
      g.members.push_back(m);
    }
    std::sort(g.index.begin(), g.index.end());
    g.next_pos.assign(g.members.size(), 0);
    group_index_.emplace(id, static_cast<int32_t>(groups_.size()));
    groups_.push_back(std::move(g));
  };
  for (const auto& [id, members] : comm_groups_.groups)
    if (!is_world_group(id) && !group_index_.count(id)) add_group(id, members, true);

  std::unordered_map<P2PKey, int32_t, P2PHash> channel_index;
  for (int64_t r = 0; r < ranks_; ++r) {
    RankGraph& g = graphs_[static_cast<size_t>(r)];
    for (uint32_t i = 0; i < g.size(); ++i) {
      if (g.comm[i] < 0) continue;
      CommInfo& c = g.comms[static_cast<size_t>(g.comm[i])];
      if (g.kind[i] == kColl) {
        const std::string& id = g.comm_groups[static_cast<size_t>(g.comm[i])];
        auto it = group_index_.find(id);
        if (it == group_index_.end()) {
          std::vector<int64_t> all;
          if (is_world_group(id))
            for (int64_t m = 0; m < ranks_; ++m) all.push_back(m);
          add_group(id, all, is_world_group(id));
          it = group_index_.find(id);
        }
        c.group = it->second;
        const Group& grp = groups_[static_cast<size_t>(c.group)];
        if (grp.known && grp.members.size() >= 2) c.member = grp.member_of(r);
        continue;
      }
      const uint32_t needed = g.kind[i] == kSend ? (kMissCommDst | kMissCommTag | kMissCommSize)
                                                 : (kMissCommSrc | kMissCommTag | kMissCommSize);
      if (c.missing & needed) continue;  // never matches anything
      const P2PKey key =
          g.kind[i] == kSend ? P2PKey{r, c.peer, c.tag, c.size} : P2PKey{c.peer, r, c.tag, c.size};
      auto [it, inserted] = channel_index.emplace(key, static_cast<int32_t>(channels_.size()));
      if (inserted) {
        channels_.emplace_back();
        channels_.back().key = key;
      }
      c.channel = it->second;
      Channel& ch = channels_[static_cast<size_t>(c.channel)];
      ++(g.kind[i] == kSend ? ch.sends : ch.recvs);
    }
    g.comm_groups.clear();
    g.comm_groups.shrink_to_fit();
  }
}

void Replay::post_send(int64_t rank, uint32_t node) {
  const RankGraph& g = graphs_[static_cast<size_t>(rank)];
  const CommInfo& c = g.comms[static_cast<size_t>(g.comm[node])];
  if (c.channel < 0) return;
  Channel& ch = channels_[static_cast<size_t>(c.channel)];
  if (!ch.waiting.empty()) {
    const uint32_t recv = ch.waiting.front();
    ch.waiting.pop_front();
    deliver(ch.key.dst, recv);
  } else {
    ++ch.unmatched_sends;
  }
}

void Replay::issue_recv(int64_t rank, uint32_t node) {
  const RankGraph& g = graphs_[static_cast<size_t>(rank)];
  const CommInfo& c = g.comms[static_cast<size_t>(g.comm[node])];
  if (c.channel < 0) return;  // stays issued forever
  Channel& ch = channels_[static_cast<size_t>(c.channel)];
  if (ch.unmatched_sends > 0) {
    --ch.unmatched_sends;
    deliver(rank, node);
  } else {
    ch.waiting.push_back(node);
  }
}

void Replay::issue_coll(int64_t rank, uint32_t node) {
  RankGraph& g = graphs_[static_cast<size_t>(rank)];
  CommInfo& c = g.comms[static_cast<size_t>(g.comm[node])];
  if (c.member < 0) return;  // unknown group, not a member or < 2 members: never completes
  Group& grp = groups_[static_cast<size_t>(c.group)];
  c.pos = grp.next_pos[static_cast<size_t>(c.member)]++;
  if (static_cast<size_t>(c.pos) >= grp.slots.size())
    grp.slots.resize(std::max<size_t>(static_cast<size_t>(c.pos) + 1, grp.slots.size() * 2));
  Slot& s = grp.slots[static_cast<size_t>(c.pos)];
  if (s.arrived == 0) {
    s.type = c.type;
    s.size = c.size;
  } else if (s.type != c.type || s.size != c.size) {
    s.mismatch = true;
  }
  ++s.arrived;
  s.waiters.emplace_back(rank, node);
  if (s.arrived == static_cast<int64_t>(grp.members.size()) && !s.mismatch) {
    for (const auto& [r, i] : s.waiters) deliver(r, i);
    s.completed = true;
    std::vector<std::pair<int64_t, uint32_t>>().swap(s.waiters);
  }
}

// One rank's work in one round: the nodes delivered to it (matched receives,
// completed collectives) complete, so does everything local that follows.
// SENDs and collectives go through the rank's one communication slot, lowest
// id first: a SEND completes when issued (eager), a collective holds the
// slot until it completes. The receives that became ready are then issued
// in file order (they do not use the slot).
void Replay::phase(int64_t rank, const std::vector<uint32_t>& seeds, bool initial) {
  RankGraph& g = graphs_[static_cast<size_t>(rank)];
  stack_.clear();
  ready_comm_.clear();
  const auto later_id = [&g](uint32_t a, uint32_t b) { return g.ids[a] > g.ids[b]; };
  auto become_ready = [&](uint32_t u) {
    switch (g.kind[u]) {
      case kSend:
      case kColl:
        g.slot_queue.push_back(u);
        std::push_heap(g.slot_queue.begin(), g.slot_queue.end(), later_id);
        break;
      case kRecv:
        ready_comm_.push_back(u);
        break;
      default:
        stack_.push_back(u);
        break;
    }
  };
  if (initial)
    for (uint32_t u = 0; u < g.size(); ++u)
      if (g.remaining[u] == 0) become_ready(u);
  for (uint32_t u : seeds) {
    if (u == g.slot_holder) g.slot_holder = kNoNode;
    stack_.push_back(u);
  }
  for (;;) {
    while (!stack_.empty()) {
      const uint32_t u = stack_.back();
      stack_.pop_back();
      g.state[u] = kDone;
      ++g.done;
      for (uint32_t k = g.child_start[u]; k < g.child_start[u + 1]; ++k)
        if (--g.remaining[g.children[k]] == 0) become_ready(g.children[k]);
    }
    if (g.slot_holder != kNoNode || g.slot_queue.empty()) break;
    std::pop_heap(g.slot_queue.begin(), g.slot_queue.end(), later_id);
    const uint32_t u = g.slot_queue.back();
    g.slot_queue.pop_back();
    if (g.kind[u] == kSend) {
      post_send(rank, u);
      stack_.push_back(u);
    } else {
      g.state[u] = kIssued;
      g.slot_holder = u;
      issue_coll(rank, u);
    }
  }
  std::sort(ready_comm_.begin(), ready_comm_.end());
  for (uint32_t u : ready_comm_) {
    g.state[u] = kIssued;
    issue_recv(rank, u);
  }
}

void Replay::simulate() {
  const size_t n = static_cast<size_t>(ranks_);
  inbox_.assign(n, {});
  next_inbox_.assign(n, {});
  next_marked_.assign(n, 0);
  std::vector<int64_t> active;
  for (int64_t r = 0; r < ranks_; ++r)
    if (graphs_[static_cast<size_t>(r)].present) active.push_back(r);
  bool initial = true;
  while (!active.empty()) {
    ++result_.rounds;
    for (int64_t r : active) phase(r, inbox_[static_cast<size_t>(r)], initial);
    for (int64_t r : active) inbox_[static_cast<size_t>(r)].clear();
    initial = false;
    // Hand-overs of this round arrive in the next one.
    active.swap(next_active_);
    next_active_.clear();
    for (int64_t r : active) {
      inbox_[static_cast<size_t>(r)].swap(next_inbox_[static_cast<size_t>(r)]);
      next_marked_[static_cast<size_t>(r)] = 0;
    }
  }
  for (const RankGraph& g : graphs_) result_.nodes_done += g.done;
}

// ---------------------------------------------------------------------------
// Reporting.

std::string Replay::node_ref(int64_t rank, uint32_t i) const {
  const RankGraph& g = graphs_[static_cast<size_t>(rank)];
  std::string s = "node " + std::to_string(g.ids[i]);
  if (const std::string_view name = g.name(i); !name.empty()) s += " \"" + std::string(name) + "\"";
  return s;
}

// "RECV from rank 1 (tag 7, size 50)", "ALL_REDUCE size 100 on group 3", ...
std::string Replay::describe(int64_t rank, uint32_t i) const {
  const RankGraph& g = graphs_[static_cast<size_t>(rank)];
  if (g.comm[i] < 0) return "";
  const CommInfo& c = g.comms[static_cast<size_t>(g.comm[i])];
  switch (g.kind[i]) {
    case kSend:
      return "SEND to rank " + std::to_string(c.peer) + " (tag " + std::to_string(c.tag) +
             ", size " + std::to_string(c.size) + ")";
    case kRecv:
      return "RECV from rank " + std::to_string(c.peer) + " (tag " + std::to_string(c.tag) +
             ", size " + std::to_string(c.size) + ")";
    case kColl: {
      std::string s = std::string(c.type < 0 ? "collective" : coll_name(c.type)) + " size " +
                      std::to_string(c.size) + " on " +
                      group_text(groups_[static_cast<size_t>(c.group)].id);
      if (c.pos >= 0) s += " (its #" + std::to_string(c.pos) + " there)";
      return s;
    }
    default:
      return "";
  }
}

// What a not-yet-ready node ultimately waits for: follows the first
// unfinished dependency up to an issued but blocked node, a missing id or a
// cycle.
std::string Replay::blocker(int64_t rank, uint32_t i) const {
  const RankGraph& g = graphs_[static_cast<size_t>(rank)];
  std::unordered_set<uint32_t> seen;
  uint32_t cur = i;
  int64_t hops = 0;
  for (;;) {
    if (g.state[cur] == kIssued) {
      return "waits for " + (hops > 1 ? "(via " + std::to_string(hops - 1) + " nodes) " : "") +
             node_ref(rank, cur) + ", " + describe(rank, cur) + ", issued but blocked";
    }
    if (!seen.insert(cur).second)
      return "is in or behind a dependency cycle through " + node_ref(rank, cur);
    uint32_t next = kMissingDep;
    for (uint32_t k = g.dep_start[cur]; k < g.dep_start[cur + 1]; ++k) {
      const uint32_t d = g.deps[k];
      if (d == kMissingDep) {
        const auto it = std::lower_bound(g.missing_ids.begin(), g.missing_ids.end(),
                                         std::make_pair(cur, uint64_t{0}));
        return (cur == i ? std::string("depends") : node_ref(rank, cur) + " depends") +
               " on missing id " + std::to_string(it->second);
      }
      if (g.state[d] != kDone) {
        next = d;
        break;
      }
    }
    if (next == kMissingDep) {
      if (g.slot_holder == kNoNode || g.slot_holder == cur)
        return "is ready but was never issued (internal error)";
      return (cur == i ? std::string("is ready and") : node_ref(rank, cur) + " is ready and") +
             " waits for the rank's communication slot, held by " + node_ref(rank, g.slot_holder) +
             ", " + describe(rank, g.slot_holder) + ", issued but blocked";
    }
    cur = next;
    ++hops;
  }
}

std::string Replay::why_issued(int64_t rank, uint32_t i) const {
  const RankGraph& g = graphs_[static_cast<size_t>(rank)];
  const CommInfo& c = g.comms[static_cast<size_t>(g.comm[i])];
  std::string s = describe(rank, i) + " ";
  if (g.kind[i] == kRecv) {
    if (c.channel < 0) return s + "lacks " + missing_names(c.missing) + " and never matches";
    const Channel& ch = channels_[static_cast<size_t>(c.channel)];
    const int64_t src = c.peer;
    if (!has_file(src)) return s + "waits for rank " + std::to_string(src) + ", which has no trace";
    const RankGraph& pg = graphs_[static_cast<size_t>(src)];
    for (uint32_t j = 0; j < pg.size(); ++j) {
      if (pg.kind[j] != kSend || pg.state[j] != kWaiting) continue;
      if (pg.comms[static_cast<size_t>(pg.comm[j])].channel != c.channel) continue;
      return s + "waits for the matching SEND on rank " + std::to_string(src) + ", " +
             node_ref(src, j) + ", which " + blocker(src, j);
    }
    return s + "waits for a SEND that rank " + std::to_string(src) + " never issues (" +
           std::to_string(ch.sends) + " such SENDs for " + std::to_string(ch.recvs) + " RECVs)";
  }
  // Collective.
  const Group& grp = groups_[static_cast<size_t>(c.group)];
  if (!grp.known) return s + "never completes: the group is not in the comm-group file";
  if (grp.members.size() < 2)
    return s + "never completes: the group has " + std::to_string(grp.members.size()) + " member";
  if (c.member < 0)
    return s + "never completes: rank " + std::to_string(rank) + " is not a member of the group";
  const Slot& slot = grp.slots[static_cast<size_t>(c.pos)];
  if (slot.mismatch && slot.arrived == static_cast<int64_t>(grp.members.size())) {
    std::string t = s + "never completes: the members issue different collectives there:";
    for (size_t w = 0; w < slot.waiters.size() && w < 6; ++w) {
      const auto& [r, j] = slot.waiters[w];
      const RankGraph& wg = graphs_[static_cast<size_t>(r)];
      const CommInfo& wc = wg.comms[static_cast<size_t>(wg.comm[j])];
      t += std::string(w ? "," : "") + " rank " + std::to_string(r) + " " +
           (wc.type < 0 ? "collective" : coll_name(wc.type)) + " size " + std::to_string(wc.size);
    }
    return t;
  }
  std::vector<int64_t> absent;
  for (size_t m = 0; m < grp.members.size(); ++m)
    if (grp.next_pos[m] <= c.pos) absent.push_back(grp.members[m]);
  s += "waits for rank" + std::string(absent.size() == 1 ? " " : "s ") + rank_list(absent);
  if (absent.empty()) return s;
  const int64_t m = absent.front();
  const int64_t issued = grp.next_pos[static_cast<size_t>(grp.member_of(m))];
  if (!has_file(m)) return s + "; rank " + std::to_string(m) + " has no trace";
  s += "; rank " + std::to_string(m) + " issued " + std::to_string(issued) + " on the group";
  const RankGraph& mg = graphs_[static_cast<size_t>(m)];
  for (uint32_t j = 0; j < mg.size(); ++j) {
    if (mg.kind[j] != kColl || mg.state[j] != kWaiting) continue;
    if (mg.comms[static_cast<size_t>(mg.comm[j])].group != c.group) continue;
    return s + "; its next there, " + node_ref(m, j) + ", " + blocker(m, j);
  }
  return s + " and has no more collectives on it";
}

// First unfinished node of a rank with nothing issued.
std::string Replay::why_waiting(int64_t rank) const {
  const RankGraph& g = graphs_[static_cast<size_t>(rank)];
  for (uint32_t i = 0; i < g.size(); ++i)
    if (g.state[i] != kDone) return node_ref(rank, i) + " " + blocker(rank, i);
  return "";
}

void Replay::report() {
  result_.completed = result_.nodes_done == result_.nodes_total;
  if (result_.completed) return;
  // (rank, node) entries: one per rank first, then more of the same ranks.
  std::vector<std::pair<int64_t, std::vector<uint32_t>>> issued;
  for (int64_t r = 0; r < ranks_; ++r) {
    const RankGraph& g = graphs_[static_cast<size_t>(r)];
    if (g.done == static_cast<int64_t>(g.size())) continue;
    ++result_.stuck_ranks;
    std::vector<uint32_t> nodes;
    for (uint32_t i = 0; i < g.size(); ++i)
      if (g.state[i] == kIssued) nodes.push_back(i);
    result_.stuck_nodes += static_cast<int64_t>(nodes.size());
    issued.emplace_back(r, std::move(nodes));
  }
  std::vector<std::tuple<int64_t, int64_t, std::string>> entries;  // (rank, position, text)
  for (size_t round = 0; entries.size() < kMaxStuck; ++round) {
    bool any = false;
    for (const auto& [r, nodes] : issued) {
      if (entries.size() >= kMaxStuck) break;
      const std::string prefix = "rank " + std::to_string(r) + " ";
      if (nodes.empty()) {
        if (round == 0) entries.emplace_back(r, -1, prefix + why_waiting(r));
        continue;
      }
      if (round >= nodes.size()) continue;
      any = true;
      const uint32_t i = nodes[round];
      entries.emplace_back(r, i, prefix + node_ref(r, i) + ": " + why_issued(r, i));
    }
    if (!any) break;
  }
  std::sort(entries.begin(), entries.end());
  for (auto& e : entries) result_.stuck.push_back(std::move(std::get<2>(e)));
}

ReplayResult Replay::run(const std::string& dir, const std::string& comm_group_file, int threads) {
  try {
    if (!load(dir, comm_group_file, threads)) return result_;
    resolve();
    simulate();
    report();
  } catch (const std::exception& e) {
    result_.completed = false;
    result_.error = std::string("internal error: ") + e.what();
  }
  return result_;
}

}  // namespace

ReplayResult replay_dir(const std::string& dir, const std::string& comm_group_file, int threads) {
  Replay replay;
  return replay.run(dir, comm_group_file, threads);
}

std::string replay_summary(const ReplayResult& r) {
  if (!r.error.empty()) return "replay: error: " + r.error + "\n";
  const std::string ranks = std::to_string(r.ranks) + (r.ranks == 1 ? " rank" : " ranks");
  if (r.completed)
    return "replay: all " + std::to_string(r.nodes_total) + " nodes of " + ranks + " complete\n";
  std::string s = "replay: STUCK after " + std::to_string(r.nodes_done) + " of " +
                  std::to_string(r.nodes_total) + " nodes: " + std::to_string(r.stuck_ranks) +
                  " of " + ranks + " stuck, " + std::to_string(r.stuck_nodes) +
                  " nodes issued but blocked";
  if (!r.stuck.empty()) s += "; first:";
  s += "\n";
  for (const std::string& e : r.stuck) s += "replay:   " + e + "\n";
  return s;
}

}  // namespace stg::tools
