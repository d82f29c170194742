#include "stg/tools/inspect.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "stg/tools/group_axes.h"
#include "stg/tools/trace_set.h"
#include "stg/util/graph_algo.h"

namespace stg::tools {
namespace {

namespace fs = std::filesystem;

// One file's figures plus what only the totals and the step figures need.
struct FileRow {
  InspectFile figures;
  bool first_file = false;  // the rank's first file: the step figures count it
  std::map<std::string, CountSize> coll_by_group;  // group id text ("" when missing)
  // SEND/RECV traffic by peer rank: sends (count, size), receives.
  std::map<int64_t, std::pair<CountSize, CountSize>> p2p_by_peer;
};

// Everything else of a file, merged into the totals and dropped.
struct FileDetail {
  std::map<int, CountSize> coll_by_type;            // comm_type (-1: missing)
  std::map<int64_t, CountSize> coll_by_group_size;  // -1: group not in the comm-group file
  std::map<std::string, int64_t> group_attr;        // attribute name -> collectives
  std::set<std::string> groups_used;
  std::map<std::string, std::string> metadata;
};

// What counting a file's nodes needs from the directory.
struct Scope {
  int64_t world = 0;  // ranks up to the last trace file (not the comm groups)
  std::unordered_map<std::string, int64_t> group_size;
  std::set<std::string> first_files;
};

struct Hasher {
  uint64_t h = 0x6a09e667f3bcc908ULL;
  void add(uint64_t v) { h = util::mix64(h ^ v) + 0x632be59bd9b4e019ULL; }
  void add(const std::string& s) {
    uint64_t f = 0xcbf29ce484222325ULL;  // FNV-1a
    for (unsigned char c : s) f = (f ^ c) * 0x100000001b3ULL;
    add(f);
    add(s.size());
  }
  template <class T>
  void add_opt(const std::optional<T>& v) {
    add(v ? 1 : 0);
    if (v) add(static_cast<uint64_t>(*v));
  }
};

// Hash of a rank's graph ignoring what legitimately differs between ranks
// running the same program: node ids (deps are renumbered to file
// positions), group ids, peers and tags.
uint64_t structure_hash(const std::vector<TraceNode>& nodes) {
  std::unordered_map<uint64_t, uint64_t> pos;
  pos.reserve(nodes.size() * 2);
  for (size_t i = 0; i < nodes.size(); ++i) pos.emplace(nodes[i].id, i);
  Hasher h;
  std::vector<uint64_t> deps;
  for (const TraceNode& n : nodes) {
    h.add(static_cast<uint64_t>(n.kind));
    h.add(n.name);
    for (const auto* list : {&n.data_deps, &n.ctrl_deps}) {
      deps.clear();
      for (uint64_t d : *list) {
        auto it = pos.find(d);
        deps.push_back(it == pos.end() ? std::numeric_limits<uint64_t>::max() : it->second);
      }
      std::sort(deps.begin(), deps.end());
      h.add(deps.size());
      for (uint64_t d : deps) h.add(d);
    }
    h.add_opt(n.num_ops);
    h.add_opt(n.tensor_size);
    h.add_opt(n.comm_type);
    h.add_opt(n.comm_size);
  }
  return h.h;
}

void count_collective(const TraceNode& n, const Scope& scope, FileRow& row, FileDetail& detail) {
  const int64_t size = n.comm_size.value_or(0);
  row.figures.collectives.add(size);
  row.coll_by_group[n.group.value_or("")].add(size);
  detail.coll_by_type[n.comm_type.value_or(-1)].add(size);
  int64_t gsize = -1;
  if (n.group) {
    detail.groups_used.insert(*n.group);
    ++detail.group_attr[group_attr_name(n.group_attr)];
    if (n.group->empty() || *n.group == "0") {
      gsize = scope.world;
    } else if (auto it = scope.group_size.find(*n.group); it != scope.group_size.end()) {
      gsize = it->second;
    }
  }
  detail.coll_by_group_size[gsize].add(size);
}

void count_node(const TraceNode& n, const Scope& scope, FileRow& row, FileDetail& detail) {
  InspectFile& f = row.figures;
  ++f.nodes_by_kind[static_cast<int>(n.kind)];
  if (n.missing) ++f.nodes_missing_attributes;
  switch (n.kind) {
    case NodeKind::kComp:
      f.num_ops += n.num_ops.value_or(0);
      f.tensor_size += static_cast<int64_t>(n.tensor_size.value_or(0));
      break;
    case NodeKind::kColl:
      count_collective(n, scope, row, detail);
      break;
    case NodeKind::kSend:
    case NodeKind::kRecv: {
      (n.kind == NodeKind::kSend ? f.send : f.recv).add(n.comm_size.value_or(0));
      const std::optional<int64_t>& peer = n.kind == NodeKind::kSend ? n.comm_dst : n.comm_src;
      auto& by_peer = row.p2p_by_peer[peer.value_or(-1)];
      (n.kind == NodeKind::kSend ? by_peer.first : by_peer.second).add(n.comm_size.value_or(0));
      break;
    }
    default:
      break;
  }
}

// Reads a file's nodes and header figures; false (with `error`) when it
// cannot be read.
bool read_nodes(const std::string& path, FileRow& row, FileDetail& detail,
                std::vector<TraceNode>& nodes, std::string& error) {
  TraceReader reader;
  if (reader.open(path)) {
    row.figures.format = reader.format();
    row.figures.file_bytes = static_cast<int64_t>(reader.file_size());
    for (const auto& [k, v] : reader.metadata_attrs()) detail.metadata[k] = v;
    if (reader.has_metadata() && !reader.metadata_version().empty())
      detail.metadata["version"] = reader.metadata_version();
    TraceNode n;
    while (reader.next(n)) nodes.push_back(std::move(n));
  }
  error = reader.error();
  return error.empty();
}

// The files read so far (several at a time).
struct Collected {
  std::mutex mutex;
  std::vector<FileRow> rows;
  FileDetail total;
  std::vector<std::pair<int64_t, std::string>> read_errors;

  void add(FileRow row, const FileDetail& detail) {
    std::lock_guard lock(mutex);
    rows.push_back(std::move(row));
    for (const auto& [k, v] : detail.coll_by_type) total.coll_by_type[k].add(v);
    for (const auto& [k, v] : detail.coll_by_group_size) total.coll_by_group_size[k].add(v);
    for (const auto& [k, v] : detail.group_attr) total.group_attr[k] += v;
    total.groups_used.insert(detail.groups_used.begin(), detail.groups_used.end());
    for (const auto& [k, v] : detail.metadata) total.metadata.emplace(k, v);
  }
};

void read_file(const Scope& scope, int64_t rank, const std::string& path, Collected& out) {
  FileRow row;
  FileDetail detail;
  row.figures.rank = rank;
  row.figures.file = fs::path(path).filename().string();
  row.first_file = scope.first_files.count(path) > 0;
  std::vector<TraceNode> nodes;
  std::string error;
  if (!read_nodes(path, row, detail, nodes, error)) {
    std::lock_guard lock(out.mutex);
    out.read_errors.emplace_back(rank, error);
    return;
  }
  row.figures.nodes = static_cast<int64_t>(nodes.size());
  for (const TraceNode& n : nodes) count_node(n, scope, row, detail);
  row.figures.structure_hash = structure_hash(nodes);
  out.add(std::move(row), detail);
}

// The comm groups of each rank, for telling transfers apart: a SEND/RECV
// along a mesh axis (ring attention) has its peer in a common group, one
// between pipeline stages never does.
class GroupsOfRank {
 public:
  explicit GroupsOfRank(const CommGroups& groups) {
    for (const auto& [id, members] : groups.groups)
      for (int64_t r : members) of_[r].push_back({&id, members.size()});
  }
  // The smallest group holding both ranks, or nullptr.
  const std::string* common(int64_t a, int64_t b) const {
    const auto ia = of_.find(a), ib = of_.find(b);
    if (ia == of_.end() || ib == of_.end()) return nullptr;
    const std::string* best = nullptr;
    size_t size = 0;
    for (const auto& [id, n] : ia->second)
      for (const auto& [other, m] : ib->second)
        if (*id == *other && (!best || n < size)) {
          best = id;
          size = n;
        }
    return best;
  }

 private:
  std::unordered_map<int64_t, std::vector<std::pair<const std::string*, size_t>>> of_;
};

// Ranks per pipeline stage as the transfers show it: the smallest distance
// to a SEND/RECV peer between stages (group_axes.h); 0 when there are none.
int64_t ranks_per_stage(const std::vector<FileRow>& rows, const GroupsOfRank& groups) {
  int64_t r = 0;
  for (const FileRow& row : rows) {
    if (!row.first_file) continue;
    for (const auto& [peer, traffic] : row.p2p_by_peer) {
      const int64_t distance = peer >= 0 ? std::abs(peer - row.figures.rank) : 0;
      if (distance > 0 && !groups.common(row.figures.rank, peer) && (r == 0 || distance < r))
        r = distance;
    }
  }
  return r;
}

// The per-step figures of the ranks read (their first file each).
report::StepFigures step_figures(const std::vector<FileRow>& rows, const CommGroups& groups) {
  const GroupsOfRank groups_of(groups);
  const std::map<std::string, std::string> axes =
      group_axes(groups, ranks_per_stage(rows, groups_of));
  report::StepFigures f;
  f.units = "num_ops and comm_size as the traces store them";
  for (const FileRow& row : rows) {
    if (!row.first_file) continue;
    const InspectFile& file = row.figures;
    report::RankStep step;
    step.flops = file.num_ops;
    for (const auto& [group, c] : row.coll_by_group) {
      const auto it = axes.find(group);
      step.axes[it == axes.end() ? "other" : it->second].add({c.count, c.size, 0, 0});
    }
    // Between stages "pp"; along an axis "<axis> p2p" (as report/stage_figures.h).
    for (const auto& [peer, traffic] : row.p2p_by_peer) {
      const std::string* common = peer >= 0 ? groups_of.common(file.rank, peer) : nullptr;
      std::string name = "pp";
      if (common) {
        const auto it = axes.find(*common);
        const std::string axis = it == axes.end() ? "other" : it->second;
        // Peers in a group of two stages (DualPipe's middle stages) are pipeline peers.
        if (axis != "embedding" && axis != "dualpipe") name = axis + " p2p";
      }
      const auto& [sent, received] = traffic;
      step.axes[name].add({sent.count, sent.size, received.count, received.size});
    }
    f.add(file.rank, step);
  }
  return f;
}

// Adds one file's value to a spread; `first`: the first file counted.
void spread_add(Spread& s, int64_t v, bool first) {
  s.total += v;
  s.min = first ? v : std::min(s.min, v);
  s.max = first ? v : std::max(s.max, v);
}

// The sums and spreads over the files (rows sorted by rank).
void add_totals(const std::vector<FileRow>& rows, InspectReport& r) {
  std::set<std::string> formats;
  for (size_t i = 0; i < rows.size(); ++i) {
    const InspectFile& f = rows[i].figures;
    const bool first = i == 0;
    r.ranks.push_back(f.rank);
    spread_add(r.file_bytes, f.file_bytes, first);
    spread_add(r.nodes, f.nodes, first);
    for (int k = 0; k < kNumNodeKinds; ++k)
      spread_add(r.nodes_by_kind[k], f.nodes_by_kind[k], first);
    r.compute.num_ops += f.num_ops;
    r.compute.num_ops_min = first ? f.num_ops : std::min(r.compute.num_ops_min, f.num_ops);
    r.compute.num_ops_max = first ? f.num_ops : std::max(r.compute.num_ops_max, f.num_ops);
    r.compute.tensor_size += f.tensor_size;
    r.collectives.total.add(f.collectives);
    r.send.add(f.send);
    r.recv.add(f.recv);
    r.nodes_missing_attributes += f.nodes_missing_attributes;
    formats.insert(format_name(f.format));
  }
  r.formats.assign(formats.begin(), formats.end());
}

// Files grouped by structure hash, in order of their first rank.
std::vector<StructureGroup> structure_groups(const std::vector<FileRow>& rows) {
  std::map<uint64_t, StructureGroup> by_hash;
  for (const FileRow& row : rows) {
    auto [it, added] = by_hash.try_emplace(row.figures.structure_hash);
    if (added) it->second.first = row.figures;
    it->second.ranks.push_back(row.figures.rank);
  }
  std::vector<StructureGroup> groups;
  for (auto& [h, g] : by_hash) groups.push_back(std::move(g));
  std::sort(groups.begin(), groups.end(), [](const StructureGroup& a, const StructureGroup& b) {
    return a.ranks.front() < b.ranks.front();
  });
  return groups;
}

CommGroupSummary summarise_comm_groups(const std::string& file, const CommGroups& groups) {
  CommGroupSummary s;
  s.file = file;
  s.groups = static_cast<int64_t>(groups.groups.size());
  for (const auto& [id, members] : groups.groups)
    ++s.groups_by_size[static_cast<int64_t>(members.size())];
  return s;
}

// Ranks below the last file's that have no file at all.
std::vector<int64_t> missing_ranks(const TraceSet& set, int64_t world) {
  std::set<int64_t> present;
  for (const auto& f : set.files()) present.insert(f.first);
  std::vector<int64_t> missing;
  for (int64_t r = 0; r < world; ++r)
    if (!present.count(r)) missing.push_back(r);
  return missing;
}

// Reads every file, a rank's second file too; rows come back sorted by rank.
std::vector<FileRow> read_files(const TraceSet& set, const Scope& scope, int threads,
                                InspectReport& report, FileDetail& total) {
  Collected collected;
  try {
    set.for_each_file(threads, [&](int64_t rank, const std::string& path) {
      read_file(scope, rank, path, collected);
    });
  } catch (const std::exception& e) {
    report.errors.push_back(std::string("internal error: ") + e.what());
  }
  std::sort(collected.read_errors.begin(), collected.read_errors.end());
  for (const auto& [rank, msg] : collected.read_errors) report.errors.push_back(msg);
  std::sort(collected.rows.begin(), collected.rows.end(),
            [](const FileRow& a, const FileRow& b) { return a.figures.rank < b.figures.rank; });
  total = std::move(collected.total);
  return std::move(collected.rows);
}

}  // namespace

InspectReport inspect_dir(const std::string& dir, const InspectOptions& options) {
  InspectReport report;
  report.directory = dir;
  TraceSet set;
  if (!set.open(dir, options.comm_group_file)) {
    report.errors.push_back(set.error());
    return report;
  }
  report.listed = true;
  Scope scope;
  if (set.read_comm_groups()) {
    for (const auto& [id, members] : set.comm_groups().groups)
      scope.group_size[id] = static_cast<int64_t>(members.size());
  } else {
    report.errors.push_back(set.error());
  }
  scope.world = set.last_file_rank() + 1;
  for (const auto& rf : set.rank_files()) scope.first_files.insert(rf.second);

  FileDetail total;
  const std::vector<FileRow> rows = read_files(set, scope, options.threads, report, total);
  add_totals(rows, report);
  report.missing_ranks = missing_ranks(set, scope.world);
  report.metadata = total.metadata;
  if (!set.comm_group_file().empty())
    report.comm_group_file = summarise_comm_groups(set.comm_group_file(), set.comm_groups());
  report.collectives.by_type = total.coll_by_type;
  report.collectives.by_group_size = total.coll_by_group_size;
  report.collectives.by_group_attr = total.group_attr;
  report.collectives.groups_used = static_cast<int64_t>(total.groups_used.size());
  report.step = step_figures(rows, set.comm_groups());
  report.structure_groups = structure_groups(rows);
  if (options.per_rank) {
    report.per_rank.emplace();
    for (const FileRow& row : rows) report.per_rank->push_back(row.figures);
  }
  return report;
}

std::string ranks_text(const std::vector<int64_t>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(ranks[i]);
    if (j > i) {
      s += j == i + 1 ? ',' : '-';
      s += std::to_string(ranks[j]);
    }
    i = j + 1;
  }
  return s;
}

}  // namespace stg::tools
