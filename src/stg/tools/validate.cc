#include "stg/tools/validate.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "stg/tools/p2p_key.h"
#include "stg/tools/trace_reader.h"
#include "stg/tools/trace_set.h"
#include "stg/util/graph_algo.h"

namespace stg::tools {

const char* rule_label(Rule r) {
  static constexpr const char* kLabels[kNumRules] = {"R0", "R1", "R2", "R3", "R4", "R5"};
  return kLabels[static_cast<int>(r)];
}

const char* rule_title(Rule r) {
  static constexpr const char* kTitles[kNumRules] = {"rank files",        "dependencies",
                                                     "collective groups", "collective order",
                                                     "send/recv",         "compute nodes"};
  return kTitles[static_cast<int>(r)];
}

int64_t ValidationReport::violations() const {
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  return total;
}

int ValidationReport::exit_status() const {
  if (!errors.empty()) return 2;
  if (replay && !replay->error.empty()) return 2;
  return violations() > 0 || (replay && !replay->completed) ? 1 : 0;
}

std::string ValidationReport::verdict() const {
  const int64_t v = violations();
  std::string body = std::to_string(v) + (v == 1 ? " violation" : " violations") + " in " +
                     std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks") + " (" +
                     std::to_string(nodes) + " nodes)";
  if (v > 0) {
    body += ":";
    bool first = true;
    for (int r = 0; r < kNumRules; ++r) {
      if (counts[r] == 0) continue;
      body += std::string(first ? " " : ", ") + rule_label(static_cast<Rule>(r)) + " " +
              rule_title(static_cast<Rule>(r)) + " " + std::to_string(counts[r]);
      first = false;
    }
  }
  if (errors.empty()) return "validate: " + body;
  if (ranks == 0) return "validate: error: " + errors.front();  // nothing was checked
  return "validate: error: " + std::to_string(errors.size()) + " unreadable input" +
         (errors.size() == 1 ? "" : "s") + "; " + body;
}

namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// Violation collection: counts everything, keeps the max_shown violations
// with the smallest sort keys per rule, so that the printed selection does
// not depend on thread scheduling. Messages are built only when kept.

using SortKey = std::array<int64_t, 4>;

struct Kept {
  SortKey key;
  std::string message;
};

class Collector {
 public:
  explicit Collector(int max_shown) : max_shown_(std::max(0, max_shown)) {}

  template <class MakeMessage>
  void add(Rule rule, const SortKey& key, MakeMessage&& make, int64_t n = 1) {
    const int r = static_cast<int>(rule);
    counts[r] += n;
    if (would_keep(r, key)) insert(r, Kept{key, make()});
  }
  void merge(Collector&& other) {
    for (int r = 0; r < kNumRules; ++r) {
      counts[r] += other.counts[r];
      for (Kept& k : other.kept[r])
        if (would_keep(r, k.key)) insert(r, std::move(k));
    }
  }
  int64_t count(Rule rule) const { return counts[static_cast<int>(rule)]; }

  std::array<int64_t, kNumRules> counts{};
  std::array<std::vector<Kept>, kNumRules> kept;

 private:
  bool would_keep(int r, const SortKey& key) const {
    if (max_shown_ == 0) return false;
    return static_cast<int>(kept[r].size()) < max_shown_ || key < kept[r].back().key;
  }
  void insert(int r, Kept k) {
    auto& v = kept[r];
    auto pos = std::upper_bound(v.begin(), v.end(), k.key,
                                [](const SortKey& a, const Kept& b) { return a < b.key; });
    v.insert(pos, std::move(k));
    if (static_cast<int>(v.size()) > max_shown_) v.pop_back();
  }

  int max_shown_;
};

// ---------------------------------------------------------------------------
// Order-sensitive 128-bit digest of a rank's (comm_type, comm_size) sequence
// on one group: cross-rank comparison without keeping the sequences.

struct Digest {
  uint64_t count = 0;
  uint64_t h1 = 0x243f6a8885a308d3ULL;
  uint64_t h2 = 0x13198a2e03707344ULL;

  void add(int64_t type, int64_t size) {
    using util::mix64;
    const uint64_t a =
        mix64(static_cast<uint64_t>(type) * 0x100000001b3ULL ^ mix64(static_cast<uint64_t>(size)));
    h1 = mix64(h1 ^ a);
    h2 = mix64(h2 + a * 0xff51afd7ed558ccdULL + count);
    ++count;
  }
  bool operator==(const Digest& o) const { return count == o.count && h1 == o.h1 && h2 == o.h2; }
};

std::string node_ref(const TraceNode& n) {
  std::string s = "node " + std::to_string(n.id);
  if (!n.name.empty()) s += " \"" + n.name + "\"";
  return s;
}

std::string rank_ref(int64_t rank) { return "rank " + std::to_string(rank) + ": "; }

bool is_world_group(const std::string& g) { return g.empty() || g == "0"; }

std::string group_ref(const std::string& g) {
  return is_world_group(g) ? std::string("world group \"") + g + "\"" : "group " + g;
}

// ---------------------------------------------------------------------------
// Dependency graph of one file.
//
// Rule R3 compares per-group collective sequences in this order: Kahn's
// topological sort over the whole graph of the rank, taking among the ready
// nodes always the one that comes first in the file, then keeping the
// collectives of the group. ASTRA-sim issues a collective as soon as its
// dependencies are resolved and matches the collectives of a communicator
// across ranks by issue order, so two collectives on one group with no path
// between them may be issued in either order. Such pairs are only safe if
// every member resolves them the same way; we demand the stricter and
// checkable property that the stable topological order (smallest file
// position first among ready nodes) yields the identical (type, size)
// sequence on all members. Generators that write every rank of a stage from
// one graph in one order satisfy it; a reordering of independent
// collectives on one member is reported even where a particular simulator
// run might not hang.

struct GraphResult {
  bool ok = true;
  std::vector<uint32_t> order;  // file positions in stable topological order
};

// One file's nodes as a graph: node id -> file position, and parent ->
// child edges in CSR form (a dependency listed twice counts twice on both
// sides, which keeps Kahn's counts consistent). Problems are R1 violations
// reported into `viol` (when not null) with keys (rank, position).
class FileGraph {
 public:
  FileGraph(const std::vector<TraceNode>& nodes, int64_t rank, Collector* viol)
      : nodes_(nodes), rank_(rank), viol_(viol) {
    index_ids();
    link();
  }

  GraphResult analyse() {
    GraphResult g;
    g.order = util::stable_topological_order(util::CsrAdjacency{start_, children_});
    g.ok = ok_ && g.order.size() == nodes_.size();
    if (g.order.size() < nodes_.size() && viol_) report_cycle(g.order);
    return g;
  }

 private:
  template <class Fn>
  void for_each_dep(size_t i, Fn&& fn) const {
    for (uint64_t d : nodes_[i].data_deps) fn(d);
    for (uint64_t d : nodes_[i].ctrl_deps) fn(d);
  }

  void index_ids() {
    index_.reserve(nodes_.size() * 2);
    for (size_t i = 0; i < nodes_.size(); ++i) {
      // Lambdas here capture no structured binding: clang before 16 cannot.
      const auto emplaced = index_.emplace(nodes_[i].id, static_cast<uint32_t>(i));
      if (emplaced.second) continue;
      const auto it = emplaced.first;
      ok_ = false;
      if (viol_)
        viol_->add(Rule::kDeps, {rank_, static_cast<int64_t>(i), 0, 0}, [&] {
          return rank_ref(rank_) + "duplicate node id " + std::to_string(nodes_[i].id) +
                 " (file positions " + std::to_string(it->second) + " and " + std::to_string(i) +
                 ")";
        });
    }
  }

  void link() {
    const size_t n = nodes_.size();
    start_.assign(n + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      for_each_dep(i, [&](uint64_t d) {
        auto it = index_.find(d);
        if (it != index_.end()) {
          ++start_[it->second + 1];
          return;
        }
        ok_ = false;
        if (viol_)
          viol_->add(Rule::kDeps, {rank_, static_cast<int64_t>(i), 1, 0}, [&] {
            return rank_ref(rank_) + node_ref(nodes_[i]) + " depends on missing id " +
                   std::to_string(d);
          });
      });
    }
    for (size_t i = 0; i < n; ++i) start_[i + 1] += start_[i];
    children_.resize(start_[n]);
    std::vector<uint32_t> fill(start_.begin(), start_.end() - 1);
    for (size_t i = 0; i < n; ++i)
      for_each_dep(i, [&](uint64_t d) {
        auto it = index_.find(d);
        if (it != index_.end()) children_[fill[it->second]++] = static_cast<uint32_t>(i);
      });
  }

  // Walks from the first blocked node to a blocked parent until a node
  // repeats: that stretch is a cycle.
  std::vector<uint32_t> find_cycle(const std::vector<char>& done) const {
    uint32_t cur = 0;
    while (done[cur]) ++cur;
    std::unordered_map<uint32_t, size_t> seen;
    std::vector<uint32_t> path;
    while (seen.find(cur) == seen.end()) {
      seen.emplace(cur, path.size());
      path.push_back(cur);
      // A blocked node has a blocked parent (its count never reached 0);
      // it is the node itself only for a self dependency.
      uint32_t next = cur;
      for_each_dep(cur, [&](uint64_t d) {
        auto it = index_.find(d);
        if (it != index_.end() && !done[it->second] && it->second != cur && next == cur)
          next = it->second;
      });
      cur = next;
    }
    return std::vector<uint32_t>(path.begin() + static_cast<std::ptrdiff_t>(seen[cur]), path.end());
  }

  void report_cycle(const std::vector<uint32_t>& order) {
    std::vector<char> done(nodes_.size(), 0);
    for (uint32_t i : order) done[i] = 1;
    const std::vector<uint32_t> cycle = find_cycle(done);
    const size_t blocked = nodes_.size() - order.size();
    const uint32_t first = *std::min_element(cycle.begin(), cycle.end());
    viol_->add(Rule::kDeps, {rank_, static_cast<int64_t>(first), 2, 0}, [&] {
      std::string s = rank_ref(rank_) + "dependency cycle: ";
      const size_t show = std::min<size_t>(cycle.size(), 6);
      for (size_t k = 0; k < show; ++k) s += node_ref(nodes_[cycle[k]]) + " depends on ";
      if (show < cycle.size()) s += "... ";
      s += node_ref(nodes_[cycle[0]]) + " (" + std::to_string(blocked) +
           " nodes never become ready)";
      return s;
    });
  }

  const std::vector<TraceNode>& nodes_;
  const int64_t rank_;
  Collector* const viol_;
  bool ok_ = true;
  std::unordered_map<uint64_t, uint32_t> index_;
  std::vector<uint32_t> start_, children_;
};

GraphResult analyse_graph(const std::vector<TraceNode>& nodes, int64_t rank, Collector* viol) {
  return FileGraph(nodes, rank, viol).analyse();
}

// ---------------------------------------------------------------------------
// Shared state of one validation run.

struct GroupInfo {
  std::vector<int64_t> members;  // as listed
  std::vector<int64_t> sorted;   // for membership tests
};

enum RankState : uint8_t { kNoFile, kUnreadable, kBrokenGraph, kOk };

struct Context {
  const ValidateOptions* options = nullptr;
  int64_t ranks = 0;
  bool have_comm_groups = false;
  std::unordered_map<std::string, GroupInfo> groups;
};

struct RankResult {
  explicit RankResult(int max_shown) : viol(max_shown) {}
  int64_t rank = 0;
  std::string error;
  int64_t nodes = 0;
  bool graph_ok = false;
  Collector viol;
  std::map<std::string, Digest> seqs;
  std::vector<std::pair<P2PKey, int>> p2p;  // +1 send, -1 recv
  int64_t zero_time_roots = 0;              // W1
  std::vector<std::pair<std::pair<int64_t, int64_t>, std::string>> zero_time_shown;
};

bool simulated(int coll) {
  return coll == kCollAllReduce || coll == kCollAllGather || coll == kCollReduceScatter ||
         coll == kCollAllToAll;
}

void check_collective(const Context& ctx, const TraceNode& n, TraceFormat format, int64_t rank,
                      int64_t pos, Collector& viol) {
  auto report = [&](int64_t sub, auto&& text) {
    viol.add(Rule::kGroups, {rank, pos, sub, 0},
             [&] { return rank_ref(rank) + "collective " + node_ref(n) + " " + text(); });
  };
  if (!n.comm_type) {
    report(0, [] { return std::string("has no comm_type"); });
  } else if (!simulated(*n.comm_type)) {
    report(0, [&] {
      return "has comm_type " + std::string(coll_name(*n.comm_type)) +
             ", which ASTRA-sim does not simulate (only ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, "
             "ALL_TO_ALL)";
    });
  }
  if (!n.comm_size) report(1, [] { return std::string("has no comm_size"); });
  if (!n.group) {
    report(2,
           [] { return std::string("names no group (pg_name / comm_group / communicator_id)"); });
    return;
  }
  if (ctx.options->require_pg_name && format == TraceFormat::kV004 &&
      (n.group_attr != GroupAttr::kPgName || !n.group_is_string))
    report(3, [&] {
      return "names its group in " + std::string(group_attr_name(n.group_attr)) +
             (n.group_is_string ? "" : " (not a string)") + ", not in the string attribute pg_name";
    });
  const std::string& g = *n.group;
  if (is_world_group(g)) {
    if (ctx.ranks < 2)
      report(4, [&] { return "runs on the " + group_ref(g) + " (all ranks) of a 1-rank run"; });
    return;
  }
  auto it = ctx.groups.find(g);
  if (it == ctx.groups.end()) {
    report(4, [&] {
      return "names " + group_ref(g) + ", which is not in the comm-group file" +
             (ctx.have_comm_groups ? "" : " (there is none)");
    });
    return;
  }
  const GroupInfo& info = it->second;
  if (!std::binary_search(info.sorted.begin(), info.sorted.end(), rank))
    report(5, [&] {
      return "names " + group_ref(g) + ", of which rank " + std::to_string(rank) +
             " is not a member";
    });
  if (info.members.size() < 2)
    report(6, [&] {
      return "runs on " + group_ref(g) + ", which has " + std::to_string(info.members.size()) +
             " member(s) (a one-member collective never finishes in ASTRA-sim)";
    });
}

RankResult process_file(const Context& ctx, int64_t rank, const std::string& path) {
  RankResult res(ctx.options->max_shown);
  res.rank = rank;
  std::vector<TraceNode> nodes;
  TraceFormat format = TraceFormat::kV004;
  if (!read_trace(path, nodes, format, res.error)) return res;
  res.nodes = static_cast<int64_t>(nodes.size());

  const GraphResult graph = analyse_graph(nodes, rank, &res.viol);
  res.graph_ok = graph.ok;
  if (graph.ok) {
    for (uint32_t i : graph.order) {
      const TraceNode& n = nodes[i];
      if (n.kind != NodeKind::kColl || !n.group) continue;
      res.seqs[*n.group].add(n.comm_type.value_or(-1), n.comm_size.value_or(-1));
    }
  }

  for (size_t i = 0; i < nodes.size(); ++i) {
    const TraceNode& n = nodes[i];
    const int64_t pos = static_cast<int64_t>(i);
    switch (n.kind) {
      case NodeKind::kColl:
        check_collective(ctx, n, format, rank, pos, res.viol);
        break;
      case NodeKind::kSend:
      case NodeKind::kRecv: {
        const bool send = n.kind == NodeKind::kSend;
        if (n.missing) {
          res.viol.add(Rule::kP2P, {rank, pos, 0, 0}, [&] {
            return rank_ref(rank) + (send ? "send " : "recv ") + node_ref(n) + " lacks " +
                   missing_names(n.missing);
          });
          break;
        }
        if (send) {
          res.p2p.push_back({{rank, *n.comm_dst, *n.comm_tag, *n.comm_size}, +1});
        } else {
          res.p2p.push_back({{*n.comm_src, rank, *n.comm_tag, *n.comm_size}, -1});
        }
        break;
      }
      case NodeKind::kComp:
        if (!n.num_ops || !n.tensor_size || *n.tensor_size == 0) {
          res.viol.add(Rule::kCompute, {rank, pos, 0, 0}, [&] {
            std::string what;
            if (!n.num_ops) what = "has no num_ops";
            if (!n.tensor_size) {
              what += std::string(what.empty() ? "" : " and ") + "has no tensor_size";
            } else if (*n.tensor_size == 0) {
              what += std::string(what.empty() ? "" : " and ") + "has tensor_size 0";
            }
            return rank_ref(rank) + "compute " + node_ref(n) + " " + what;
          });
        } else if (n.data_deps.empty() && n.ctrl_deps.empty() &&
                   hardware::roofline_ns(static_cast<uint64_t>(std::max<int64_t>(*n.num_ops, 0)),
                                         *n.tensor_size, ctx.options->roofline) == 0) {
          ++res.zero_time_roots;
          if (static_cast<int>(res.zero_time_shown.size()) < ctx.options->max_shown)
            res.zero_time_shown.push_back({{rank, pos},
                                           rank_ref(rank) + "compute " + node_ref(n) +
                                               " has no dependencies and runs in 0 ns (" +
                                               std::to_string(*n.num_ops) + " ops, tensor_size " +
                                               std::to_string(*n.tensor_size) + ")"});
        }
        break;
      default:
        break;
    }
  }
  return res;
}

// (type, size) sequence of one rank on one group, for the message of an R3
// violation (the run itself keeps only digests).
std::optional<std::vector<std::pair<int64_t, int64_t>>> group_sequence(const std::string& path,
                                                                       const std::string& group) {
  std::vector<TraceNode> nodes;
  TraceFormat format;
  std::string error;
  if (!read_trace(path, nodes, format, error)) return std::nullopt;
  const GraphResult graph = analyse_graph(nodes, 0, nullptr);
  std::vector<std::pair<int64_t, int64_t>> seq;
  for (uint32_t i : graph.order) {
    const TraceNode& n = nodes[i];
    if (n.kind == NodeKind::kColl && n.group && *n.group == group)
      seq.emplace_back(n.comm_type.value_or(-1), n.comm_size.value_or(-1));
  }
  return seq;
}

std::string coll_text(const std::pair<int64_t, int64_t>& c) {
  std::string s = c.first == -1 ? "(no comm_type)" : coll_name(static_cast<int>(c.first));
  return s + " size " + (c.second == -1 ? "(none)" : std::to_string(c.second));
}

std::string members_text(const std::vector<int64_t>& m) {
  std::string s;
  const size_t show = std::min<size_t>(m.size(), 8);
  for (size_t i = 0; i < show; ++i) s += (i ? "," : "") + std::to_string(m[i]);
  if (show < m.size()) s += ",... " + std::to_string(m.size()) + " ranks";
  return s;
}

// Numeric order of group ids (world group first, non-numeric ids last).
SortKey group_sort_key(const std::string& g) {
  if (is_world_group(g)) return {0, 0, 0, 0};
  const bool numeric =
      !g.empty() && g.size() <= 18 &&
      std::all_of(g.begin(), g.end(), [](unsigned char c) { return std::isdigit(c); });
  return {numeric ? 1 : 2, numeric ? std::stoll(g) : 0, 0, 0};
}

// ---------------------------------------------------------------------------
// One run of validate_dir: the state its checks share.

class Validation {
 public:
  Validation(const std::string& dir, const ValidateOptions& options)
      : dir_(dir), options_(options), viol_(options.max_shown) {
    report_.dir = dir;
    report_.roofline = options.roofline;
    ctx_.options = &options;
  }

  ProgressListener& progress() {
    static ProgressListener silent;
    return options_.progress ? *options_.progress : silent;
  }

  ValidationReport run() {
    if (!open()) return finish();
    check_rank_files();
    check_comm_group_file();
    if (!check_files()) return finish();
    check_order();
    check_p2p();
    MakespanOptions timed;  // read first: a bad network description is an input error
    std::string error;
    if (options_.makespan && !makespan_options_for(dir_, options_.roofline, options_.figures,
                                                   options_.timeline, timed, error))
      report_.errors.push_back(error);
    if (options_.replay) {
      if (report_.errors.empty()) {
        progress().phase("replaying", 0, "");
        report_.replay = replay_dir(dir_, options_.comm_group_file, options_.threads);
        if (options_.makespan && report_.replay->completed)
          report_.makespan = makespan_dir(dir_, options_.comm_group_file, timed, options_.threads);
      } else {
        report_.replay = ReplayResult();
        report_.replay->error = "not run: the input has errors";
      }
    }
    return finish();
  }

 private:
  // Lists the directory and reads the comm-group file; false on errors.
  bool open() {
    if (!set_.open(dir_, options_.comm_group_file)) {
      report_.errors.push_back(set_.error());
      return false;
    }
    report_.files = static_cast<int64_t>(set_.files().size());
    report_.comm_group_file = set_.comm_group_file();
    if (!set_.read_comm_groups()) {
      report_.errors.push_back(set_.error());
      return false;
    }
    ctx_.have_comm_groups = !set_.comm_group_file().empty();
    if (!ctx_.have_comm_groups)
      report_.notes.push_back("no comm-group file in " + dir_ + " (name one with --comm_group)");
    return true;
  }

  // R0: ranks 0..N-1, N covering the files and the comm-group file.
  void check_rank_files() {
    ctx_.ranks = set_.ranks();
    report_.ranks = ctx_.ranks;
    path_of_.assign(static_cast<size_t>(ctx_.ranks), std::string());
    state_.assign(static_cast<size_t>(ctx_.ranks), kNoFile);
    for (const auto& [rank, path] : set_.rank_files()) path_of_[static_cast<size_t>(rank)] = path;
    for (const auto& [rank, path] : set_.files()) {
      const std::string& first = path_of_[static_cast<size_t>(rank)];
      if (path == first) continue;
      viol_.add(Rule::kRankFiles, {rank, 1, 0, 0}, [&, rank = rank, &path = path] {
        return rank_ref(rank) + "several trace files: " + fs::path(first).filename().string() +
               " and " + fs::path(path).filename().string() + " (the first is checked)";
      });
    }
    for (int64_t r = 0; r < ctx_.ranks; ++r)
      if (path_of_[static_cast<size_t>(r)].empty())
        viol_.add(Rule::kRankFiles, {r, 0, 0, 0}, [&] {
          return rank_ref(r) + "no trace file (ranks must be 0.." + std::to_string(ctx_.ranks - 1) +
                 " without gaps)";
        });
  }

  // Comm-group file sanity (R2).
  void check_comm_group_file() {
    const CommGroups& comm_groups = set_.comm_groups();
    for (size_t gi = 0; gi < comm_groups.groups.size(); ++gi) {
      const std::string& id = comm_groups.groups[gi].first;
      const std::vector<int64_t>& members = comm_groups.groups[gi].second;
      const int64_t at = static_cast<int64_t>(gi);
      if (std::stoll(id) <= 0)
        viol_.add(Rule::kGroups, {-1, at, 0, 0}, [&] {
          return "comm-group file: group id " + id +
                 " is not a positive integer (ASTRA-sim aborts)";
        });
      GroupInfo info;
      info.members = members;
      info.sorted = members;
      std::sort(info.sorted.begin(), info.sorted.end());
      if (std::adjacent_find(info.sorted.begin(), info.sorted.end()) != info.sorted.end())
        viol_.add(Rule::kGroups, {-1, at, 1, 0},
                  [&] { return "comm-group file: group " + id + " lists a rank twice"; });
      if (!info.sorted.empty() && info.sorted.front() < 0)
        viol_.add(Rule::kGroups, {-1, at, 2, 0},
                  [&] { return "comm-group file: group " + id + " lists a negative rank"; });
      if (!ctx_.groups.emplace(id, std::move(info)).second)
        viol_.add(Rule::kGroups, {-1, at, 3, 0},
                  [&] { return "comm-group file: group id " + id + " appears twice"; });
    }
  }

  // Merges one file's result into the run (under the caller's lock).
  void merge(RankResult&& res) {
    const size_t rank = static_cast<size_t>(res.rank);
    if (!res.error.empty()) {
      state_[rank] = kUnreadable;
      read_errors_.emplace_back(res.rank, std::move(res.error));
      return;
    }
    state_[rank] = res.graph_ok ? kOk : kBrokenGraph;
    report_.nodes += res.nodes;
    viol_.merge(std::move(res.viol));
    report_.zero_time_roots += res.zero_time_roots;
    for (auto& w : res.zero_time_shown) zero_time_shown_.push_back(std::move(w));
    for (auto& [g, d] : res.seqs) seqs_[g].emplace_back(res.rank, d);
    for (const auto& [k, delta] : res.p2p) {
      auto it = p2p_.try_emplace(k, 0).first;
      it->second += delta;
      if (it->second == 0) p2p_.erase(it);
    }
  }

  // Per-file checks, several files at a time; each result is merged and
  // dropped, so memory holds one file per thread plus the cross-rank state.
  // False on an internal error.
  bool check_files() {
    std::mutex mutex;
    progress().phase("checking", ctx_.ranks, "ranks");
    try {
      set_.for_each_rank(options_.threads, [&](int64_t rank, const std::string& path) {
        RankResult res = process_file(ctx_, rank, path);
        progress().advance(1, 0);
        std::lock_guard lock(mutex);
        merge(std::move(res));
      });
    } catch (const std::exception& e) {
      report_.errors.push_back(std::string("internal error: ") + e.what());
      return false;
    }
    std::sort(read_errors_.begin(), read_errors_.end());
    for (auto& [rank, msg] : read_errors_) report_.errors.push_back(std::move(msg));
    std::sort(zero_time_shown_.begin(), zero_time_shown_.end());
    for (auto& [key, msg] : zero_time_shown_)
      if (static_cast<int>(report_.warnings.size()) < options_.max_shown)
        report_.warnings.push_back(std::move(msg));
    return true;
  }

  // The groups collectives ran on, in group_sort_key order; each group's
  // per-rank digests sorted by rank.
  std::vector<std::string> sorted_group_ids() {
    std::vector<std::string> group_ids;
    group_ids.reserve(seqs_.size());
    for (auto& [g, v] : seqs_) {
      group_ids.push_back(g);
      std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    std::sort(group_ids.begin(), group_ids.end(), [](const std::string& a, const std::string& b) {
      const SortKey ka = group_sort_key(a), kb = group_sort_key(b);
      return ka != kb ? ka < kb : a < b;
    });
    return group_ids;
  }

  // The message of an R3 violation: rank m's digest `d` differs from rank
  // ref's. Re-reads both files for the first difference.
  std::string order_message(const std::string& g, const std::vector<int64_t>& members, int64_t m,
                            const Digest& d, int64_t ref, const Digest& ref_digest,
                            std::optional<std::vector<std::pair<int64_t, int64_t>>>& ref_seq) {
    std::string s = group_ref(g) + " (ranks " + members_text(members) + "): rank " +
                    std::to_string(m) + " issues " + std::to_string(d.count) +
                    " collectives on it, rank " + std::to_string(ref) + " " +
                    std::to_string(ref_digest.count);
    if (!ref_seq) ref_seq = group_sequence(path_of_[static_cast<size_t>(ref)], g);
    const auto seq = group_sequence(path_of_[static_cast<size_t>(m)], g);
    if (!ref_seq || !seq) return s + "; sequences differ";
    size_t k = 0;
    while (k < seq->size() && k < ref_seq->size() && (*seq)[k] == (*ref_seq)[k]) ++k;
    s += "; first difference at collective #" + std::to_string(k) + ": rank " + std::to_string(m) +
         " " + (k < seq->size() ? coll_text((*seq)[k]) : "none") + ", rank " + std::to_string(ref) +
         " " + (k < ref_seq->size() ? coll_text((*ref_seq)[k]) : "none");
    return s;
  }

  // R3 on one group: every member's digest equals the first healthy member's.
  void check_group_order(int64_t gi, const std::string& g, const std::vector<int64_t>& members) {
    const auto& per_rank = seqs_[g];
    auto digest_of = [&](int64_t r) {
      auto it = std::lower_bound(per_rank.begin(), per_rank.end(), r,
                                 [](const auto& e, int64_t x) { return e.first < x; });
      return it != per_rank.end() && it->first == r ? it->second : Digest();
    };
    std::optional<int64_t> ref;
    Digest ref_digest;
    std::optional<std::vector<std::pair<int64_t, int64_t>>> ref_seq;
    for (size_t mi = 0; mi < members.size(); ++mi) {
      const int64_t m = members[mi];
      // No file / unreadable / broken graph: reported already.
      if (m < 0 || m >= ctx_.ranks || state_[static_cast<size_t>(m)] != kOk) continue;
      const Digest d = digest_of(m);
      if (!ref) {
        ref = m;
        ref_digest = d;
        continue;
      }
      if (d == ref_digest) continue;
      viol_.add(Rule::kOrder, {gi, static_cast<int64_t>(mi), 0, 0},
                [&] { return order_message(g, members, m, d, *ref, ref_digest, ref_seq); });
    }
  }

  // R3 over every group collectives ran on.
  void check_order() {
    const std::vector<std::string> group_ids = sorted_group_ids();
    std::vector<int64_t> all_ranks;
    for (int64_t gi = 0; gi < static_cast<int64_t>(group_ids.size()); ++gi) {
      const std::string& g = group_ids[static_cast<size_t>(gi)];
      if (is_world_group(g)) {
        if (all_ranks.empty())
          for (int64_t r = 0; r < ctx_.ranks; ++r) all_ranks.push_back(r);
        check_group_order(gi, g, all_ranks);
      } else if (auto it = ctx_.groups.find(g); it != ctx_.groups.end()) {
        check_group_order(gi, g, it->second.members);
      }  // else reported under R2
    }
  }

  // R4: whatever did not cancel out, except where the peer's file is
  // missing or unreadable (already reported; its nodes were never seen).
  void check_p2p() {
    std::vector<std::pair<P2PKey, int64_t>> unmatched(p2p_.begin(), p2p_.end());
    std::sort(unmatched.begin(), unmatched.end());
    for (size_t i = 0; i < unmatched.size(); ++i) {
      const auto& [k, delta] = unmatched[i];
      const int64_t peer = delta > 0 ? k.dst : k.src;
      if (peer >= 0 && peer < ctx_.ranks &&
          (state_[static_cast<size_t>(peer)] == kNoFile ||
           state_[static_cast<size_t>(peer)] == kUnreadable))
        continue;
      const int64_t n = delta > 0 ? delta : -delta;
      viol_.add(
          Rule::kP2P, {k.src, k.dst, k.tag, static_cast<int64_t>(i)},
          [&, &k = k, delta = delta] { return unmatched_message(k, delta, n); }, n);
    }
  }

  static std::string unmatched_message(const P2PKey& k, int64_t delta, int64_t n) {
    const std::string what = "(src " + std::to_string(k.src) + ", dst " + std::to_string(k.dst) +
                             ", tag " + std::to_string(k.tag) + ", size " + std::to_string(k.size) +
                             ")";
    if (delta > 0)
      return "send " + what + " on rank " + std::to_string(k.src) + ": " + std::to_string(n) +
             " more send(s) than matching recvs on rank " + std::to_string(k.dst);
    return "recv " + what + " on rank " + std::to_string(k.dst) + ": " + std::to_string(n) +
           " more recv(s) than matching sends on rank " + std::to_string(k.src);
  }

  ValidationReport finish() {
    report_.counts = viol_.counts;
    for (int r = 0; r < kNumRules; ++r)
      for (Kept& k : viol_.kept[r])
        report_.shown.push_back({static_cast<Rule>(r), std::move(k.message)});
    return std::move(report_);
  }

  const std::string dir_;
  const ValidateOptions& options_;
  ValidationReport report_;
  Collector viol_;
  TraceSet set_;
  Context ctx_;
  std::vector<std::string> path_of_;  // by rank: its first file ("" when none)
  std::vector<uint8_t> state_;        // by rank: RankState
  std::unordered_map<std::string, std::vector<std::pair<int64_t, Digest>>> seqs_;
  std::unordered_map<P2PKey, int64_t, P2PHash> p2p_;
  std::vector<std::pair<int64_t, std::string>> read_errors_;
  std::vector<std::pair<std::pair<int64_t, int64_t>, std::string>> zero_time_shown_;
};

}  // namespace

ValidationReport validate_dir(const std::string& dir, const ValidateOptions& options) {
  return Validation(dir, options).run();
}

}  // namespace stg::tools
