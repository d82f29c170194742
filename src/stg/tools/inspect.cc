#include "stg/tools/inspect.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
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

#include "stg/report/step_figures.h"
#include "stg/tools/group_axes.h"
#include "stg/tools/trace_reader.h"
#include "stg/tools/trace_set.h"
#include "stg/util/graph_algo.h"

namespace stg::tools {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

constexpr int kNumKinds = static_cast<int>(NodeKind::kUnknown) + 1;
constexpr NodeKind kKindOrder[] = {NodeKind::kComp,     NodeKind::kColl,    NodeKind::kSend,
                                   NodeKind::kRecv,     NodeKind::kMemLoad, NodeKind::kMemStore,
                                   NodeKind::kMetadata, NodeKind::kInvalid, NodeKind::kUnknown};

struct CountSize {
  int64_t count = 0;
  int64_t size = 0;
  void add(int64_t s) {
    ++count;
    size += s;
  }
  void add(const CountSize& o) {
    count += o.count;
    size += o.size;
  }
};

// Compact per-rank figures (kept for every rank).
struct RankRow {
  int64_t rank = 0;
  std::string file;
  uint64_t bytes = 0;
  TraceFormat format = TraceFormat::kV004;
  int64_t nodes = 0;
  std::array<int64_t, kNumKinds> by_kind{};
  int64_t num_ops = 0;
  int64_t tensor_size = 0;
  CountSize coll, send, recv;
  int64_t missing_attr_nodes = 0;
  uint64_t structure_hash = 0;
  // For the per-step figures (the rank's first file only).
  bool first_file = false;
  std::map<std::string, CountSize> coll_by_group;  // group id text ("" when missing)
  int64_t p2p_distance = 0;                        // smallest |peer - rank| of a SEND/RECV; 0: none
};

// Everything else of a file, merged into the totals and dropped.
struct FileDetail {
  std::map<int, CountSize> coll_by_type;            // comm_type (-1: missing)
  std::map<int64_t, CountSize> coll_by_group_size;  // -1: group not in the comm-group file
  std::map<std::string, int64_t> group_attr;        // attribute name -> collectives
  std::set<std::string> groups_used;
  std::map<std::string, std::string> metadata;
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

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// "0-3,8,10-11"
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

std::string coll_key(int c) { return c == -1 ? "MISSING" : coll_name(c); }

json count_size_json(const CountSize& c) { return json{{"count", c.count}, {"size", c.size}}; }

json row_json(const RankRow& r) {
  json by_kind = json::object();
  for (NodeKind k : kKindOrder)
    if (r.by_kind[static_cast<int>(k)]) by_kind[kind_name(k)] = r.by_kind[static_cast<int>(k)];
  return json{{"rank", r.rank},
              {"file", r.file},
              {"format", format_name(r.format)},
              {"file_bytes", r.bytes},
              {"nodes", r.nodes},
              {"nodes_by_type", by_kind},
              {"num_ops", r.num_ops},
              {"tensor_size", r.tensor_size},
              {"collectives", count_size_json(r.coll)},
              {"send", count_size_json(r.send)},
              {"recv", count_size_json(r.recv)},
              {"nodes_missing_attributes", r.missing_attr_nodes},
              {"structure_hash", hex16(r.structure_hash)}};
}

// Ranks per pipeline stage as the transfers show it: the smallest distance
// to a SEND/RECV peer (group_axes.h); 0 when there are none.
int64_t ranks_per_stage(const std::vector<RankRow>& rows) {
  int64_t r = 0;
  for (const RankRow& row : rows)
    if (row.first_file && row.p2p_distance > 0 && (r == 0 || row.p2p_distance < r))
      r = row.p2p_distance;
  return r;
}

// The per-step figures of the ranks read (their first file each).
report::StepFigures step_figures(const std::vector<RankRow>& rows, const CommGroups& groups) {
  const std::map<std::string, std::string> axes = group_axes(groups, ranks_per_stage(rows));
  report::StepFigures f;
  f.units = "num_ops and comm_size as the traces store them";
  for (const RankRow& row : rows) {
    if (!row.first_file) continue;
    report::RankStep step;
    step.flops = row.num_ops;
    for (const auto& [group, c] : row.coll_by_group) {
      const auto it = axes.find(group);
      step.axes[it == axes.end() ? "other" : it->second].add({c.count, c.size, 0, 0});
    }
    step.axes["pp"].add({row.send.count, row.send.size, row.recv.count, row.recv.size});
    f.add(row.rank, step);
  }
  return f;
}

}  // namespace

json inspect_dir(const std::string& dir, const InspectOptions& options) {
  json out = json::object();
  out["directory"] = dir;
  json errors = json::array();
  TraceSet set;
  if (!set.open(dir, options.comm_group_file)) {
    errors.push_back(set.error());
    out["errors"] = errors;
    return out;
  }
  std::unordered_map<std::string, int64_t> group_size;
  if (set.read_comm_groups()) {
    for (const auto& [id, members] : set.comm_groups().groups)
      group_size[id] = static_cast<int64_t>(members.size());
  } else {
    errors.push_back(set.error());
  }
  const CommGroups& comm_groups = set.comm_groups();
  // The world group: ranks up to the last trace file (not the comm groups).
  const int64_t world = set.last_file_rank() + 1;

  std::vector<RankRow> rows;
  FileDetail total;
  std::mutex mutex;
  std::vector<std::pair<int64_t, std::string>> read_errors;
  std::set<std::string> first_files;
  for (const auto& rf : set.rank_files()) first_files.insert(rf.second);
  try {
    // Every file, a rank's second file too.
    set.for_each_file(options.threads, [&](int64_t rank, const std::string& path) {
      RankRow row;
      FileDetail detail;
      row.rank = rank;
      row.file = fs::path(path).filename().string();
      row.first_file = first_files.count(path) > 0;
      std::vector<TraceNode> nodes;
      {
        TraceReader reader;
        if (reader.open(path)) {
          row.format = reader.format();
          row.bytes = reader.file_size();
          for (const auto& [k, v] : reader.metadata_attrs()) detail.metadata[k] = v;
          if (reader.has_metadata() && !reader.metadata_version().empty())
            detail.metadata["version"] = reader.metadata_version();
          TraceNode n;
          while (reader.next(n)) nodes.push_back(std::move(n));
        }
        if (!reader.error().empty()) {
          std::lock_guard lock(mutex);
          read_errors.emplace_back(rank, reader.error());
          return;
        }
      }
      row.nodes = static_cast<int64_t>(nodes.size());
      for (const TraceNode& n : nodes) {
        ++row.by_kind[static_cast<int>(n.kind)];
        if (n.missing) ++row.missing_attr_nodes;
        switch (n.kind) {
          case NodeKind::kComp:
            row.num_ops += n.num_ops.value_or(0);
            row.tensor_size += static_cast<int64_t>(n.tensor_size.value_or(0));
            break;
          case NodeKind::kColl: {
            const int64_t size = n.comm_size.value_or(0);
            row.coll.add(size);
            row.coll_by_group[n.group.value_or("")].add(size);
            detail.coll_by_type[n.comm_type.value_or(-1)].add(size);
            int64_t gsize = -1;
            if (n.group) {
              detail.groups_used.insert(*n.group);
              ++detail.group_attr[group_attr_name(n.group_attr)];
              if (n.group->empty() || *n.group == "0") {
                gsize = world;
              } else if (auto it = group_size.find(*n.group); it != group_size.end()) {
                gsize = it->second;
              }
            }
            detail.coll_by_group_size[gsize].add(size);
            break;
          }
          case NodeKind::kSend:
          case NodeKind::kRecv: {
            (n.kind == NodeKind::kSend ? row.send : row.recv).add(n.comm_size.value_or(0));
            const std::optional<int64_t>& peer =
                n.kind == NodeKind::kSend ? n.comm_dst : n.comm_src;
            const int64_t distance = peer ? std::abs(*peer - rank) : 0;
            if (distance > 0 && (row.p2p_distance == 0 || distance < row.p2p_distance))
              row.p2p_distance = distance;
            break;
          }
          default:
            break;
        }
      }
      row.structure_hash = structure_hash(nodes);
      std::lock_guard lock(mutex);
      rows.push_back(std::move(row));
      for (const auto& [k, v] : detail.coll_by_type) total.coll_by_type[k].add(v);
      for (const auto& [k, v] : detail.coll_by_group_size) total.coll_by_group_size[k].add(v);
      for (const auto& [k, v] : detail.group_attr) total.group_attr[k] += v;
      total.groups_used.insert(detail.groups_used.begin(), detail.groups_used.end());
      for (const auto& [k, v] : detail.metadata) total.metadata.emplace(k, v);
    });
  } catch (const std::exception& e) {
    errors.push_back(std::string("internal error: ") + e.what());
  }
  std::sort(read_errors.begin(), read_errors.end());
  for (const auto& [rank, msg] : read_errors) errors.push_back(msg);
  std::sort(rows.begin(), rows.end(),
            [](const RankRow& a, const RankRow& b) { return a.rank < b.rank; });

  // Totals.
  RankRow sum;
  std::array<int64_t, kNumKinds> kind_min, kind_max;
  kind_min.fill(std::numeric_limits<int64_t>::max());
  kind_max.fill(0);
  uint64_t bytes_min = std::numeric_limits<uint64_t>::max(), bytes_max = 0;
  int64_t ops_min = std::numeric_limits<int64_t>::max(), ops_max = 0;
  int64_t nodes_min = std::numeric_limits<int64_t>::max(), nodes_max = 0;
  std::set<std::string> formats;
  std::map<uint64_t, std::vector<int64_t>> by_hash;
  std::map<uint64_t, const RankRow*> representative;
  for (const RankRow& r : rows) {
    sum.bytes += r.bytes;
    sum.nodes += r.nodes;
    for (int k = 0; k < kNumKinds; ++k) {
      sum.by_kind[k] += r.by_kind[k];
      kind_min[k] = std::min(kind_min[k], r.by_kind[k]);
      kind_max[k] = std::max(kind_max[k], r.by_kind[k]);
    }
    sum.num_ops += r.num_ops;
    sum.tensor_size += r.tensor_size;
    sum.coll.add(r.coll);
    sum.send.add(r.send);
    sum.recv.add(r.recv);
    sum.missing_attr_nodes += r.missing_attr_nodes;
    bytes_min = std::min(bytes_min, r.bytes);
    bytes_max = std::max(bytes_max, r.bytes);
    ops_min = std::min(ops_min, r.num_ops);
    ops_max = std::max(ops_max, r.num_ops);
    nodes_min = std::min(nodes_min, r.nodes);
    nodes_max = std::max(nodes_max, r.nodes);
    formats.insert(format_name(r.format));
    by_hash[r.structure_hash].push_back(r.rank);
    representative.emplace(r.structure_hash, &r);
  }
  if (rows.empty()) bytes_min = ops_min = nodes_min = 0;

  std::vector<int64_t> ranks;
  for (const RankRow& r : rows) ranks.push_back(r.rank);
  out["ranks"] = static_cast<int64_t>(rows.size());
  out["rank_list"] = ranks_text(ranks);
  std::vector<int64_t> missing_ranks;
  {
    std::set<int64_t> present;
    for (const auto& f : set.files()) present.insert(f.first);
    for (int64_t r = 0; r < world; ++r)
      if (!present.count(r)) missing_ranks.push_back(r);
  }
  if (!missing_ranks.empty()) out["missing_ranks"] = ranks_text(missing_ranks);
  out["formats"] = json(std::vector<std::string>(formats.begin(), formats.end()));
  if (!total.metadata.empty()) out["metadata"] = total.metadata;
  if (set.comm_group_file().empty()) {
    out["comm_group_file"] = nullptr;
  } else {
    json cg{{"file", set.comm_group_file()},
            {"groups", static_cast<int64_t>(comm_groups.groups.size())}};
    std::map<int64_t, int64_t> sizes;
    for (const auto& [id, members] : comm_groups.groups)
      ++sizes[static_cast<int64_t>(members.size())];
    json by_size = json::object();
    for (const auto& [s, c] : sizes) by_size[std::to_string(s)] = c;
    cg["groups_by_size"] = by_size;
    out["comm_group_file"] = cg;
  }
  out["file_bytes"] = json{{"total", sum.bytes}, {"min", bytes_min}, {"max", bytes_max}};
  json nodes_by_type = json::object();
  for (NodeKind k : kKindOrder) {
    const int ki = static_cast<int>(k);
    if (!sum.by_kind[ki]) continue;
    nodes_by_type[kind_name(k)] =
        json{{"total", sum.by_kind[ki]}, {"min", kind_min[ki]}, {"max", kind_max[ki]}};
  }
  out["nodes"] = json{{"total", sum.nodes}, {"min", nodes_min}, {"max", nodes_max}};
  out["nodes_by_type"] = nodes_by_type;
  out["nodes_missing_attributes"] = sum.missing_attr_nodes;
  out["compute"] = json{{"num_ops", sum.num_ops},
                        {"num_ops_min", ops_min},
                        {"num_ops_max", ops_max},
                        {"tensor_size", sum.tensor_size}};
  json coll = json::object();
  for (const auto& [k, v] : total.coll_by_type) coll[coll_key(k)] = count_size_json(v);
  out["collectives"] = json{{"total", count_size_json(sum.coll)}, {"by_type", coll}};
  json by_gsize = json::object();
  for (const auto& [k, v] : total.coll_by_group_size)
    by_gsize[k < 0 ? std::string("unknown") : std::to_string(k)] = count_size_json(v);
  out["collectives"]["by_group_size"] = by_gsize;
  out["collectives"]["group_attribute"] = total.group_attr;
  out["collectives"]["groups_used"] = static_cast<int64_t>(total.groups_used.size());
  out["send"] = count_size_json(sum.send);
  out["recv"] = count_size_json(sum.recv);
  out["step"] = report::to_json(step_figures(rows, comm_groups));

  // Structure groups, in order of their first rank.
  std::vector<std::pair<uint64_t, std::vector<int64_t>>> groups(by_hash.begin(), by_hash.end());
  std::sort(groups.begin(), groups.end(),
            [](const auto& a, const auto& b) { return a.second.front() < b.second.front(); });
  json sg = json::array();
  for (const auto& [h, members] : groups) {
    const RankRow& r = *representative.at(h);
    json g = row_json(r);
    g.erase("rank");
    g.erase("file");
    g.erase("format");
    g["ranks"] = ranks_text(members);
    g["num_ranks"] = static_cast<int64_t>(members.size());
    g["first_rank"] = r.rank;
    sg.push_back(g);
  }
  out["structure_groups"] = sg;
  if (options.per_rank) {
    json pr = json::array();
    for (const RankRow& r : rows) pr.push_back(row_json(r));
    out["per_rank"] = pr;
  }
  out["errors"] = errors;
  return out;
}

namespace {

std::string num(int64_t v) {
  // 1234567 -> "1234567" (kept exact; the tables are for reading and diffing)
  return std::to_string(v);
}

void print_text(const json& j) {
  auto get = [](const json& o, const char* k) -> int64_t {
    return o.contains(k) && o[k].is_number() ? o[k].get<int64_t>() : 0;
  };
  std::printf("trace directory: %s\n", j["directory"].get<std::string>().c_str());
  if (!j.contains("ranks")) return;
  std::string formats;
  for (const auto& f : j["formats"])
    formats += (formats.empty() ? "" : ", ") + f.get<std::string>();
  std::printf("  ranks:           %lld (%s), format %s\n", static_cast<long long>(get(j, "ranks")),
              j["rank_list"].get<std::string>().c_str(), formats.c_str());
  if (j.contains("missing_ranks"))
    std::printf("  missing ranks:   %s\n", j["missing_ranks"].get<std::string>().c_str());
  if (j.contains("metadata")) std::printf("  metadata:        %s\n", j["metadata"].dump().c_str());
  if (j["comm_group_file"].is_null()) {
    std::printf("  comm-group file: none\n");
  } else {
    const json& cg = j["comm_group_file"];
    std::string sizes;
    for (const auto& [s, c] : cg["groups_by_size"].items())
      sizes += (sizes.empty() ? "" : ", ") + std::to_string(c.get<int64_t>()) + " of size " + s;
    std::printf("  comm-group file: %s (%lld groups: %s)\n", cg["file"].get<std::string>().c_str(),
                static_cast<long long>(get(cg, "groups")), sizes.c_str());
  }
  const json& fb = j["file_bytes"];
  std::printf("  file bytes:      %s total, %s .. %s per rank\n", num(get(fb, "total")).c_str(),
              num(get(fb, "min")).c_str(), num(get(fb, "max")).c_str());

  std::printf("\n%-24s %14s %12s %12s\n", "nodes", "total", "min/rank", "max/rank");
  for (const auto& [k, v] : j["nodes_by_type"].items())
    std::printf("  %-22s %14s %12s %12s\n", k.c_str(), num(get(v, "total")).c_str(),
                num(get(v, "min")).c_str(), num(get(v, "max")).c_str());
  const json& nd = j["nodes"];
  std::printf("  %-22s %14s %12s %12s\n", "all", num(get(nd, "total")).c_str(),
              num(get(nd, "min")).c_str(), num(get(nd, "max")).c_str());
  if (get(j, "nodes_missing_attributes"))
    std::printf("  nodes missing attributes: %lld\n",
                static_cast<long long>(get(j, "nodes_missing_attributes")));

  const json& c = j["compute"];
  std::printf("\ncompute (COMP_NODE)\n");
  std::printf("  num_ops total %s (per rank %s .. %s)\n", num(get(c, "num_ops")).c_str(),
              num(get(c, "num_ops_min")).c_str(), num(get(c, "num_ops_max")).c_str());
  std::printf("  tensor_size total %s\n", num(get(c, "tensor_size")).c_str());

  const json& co = j["collectives"];
  std::printf("\n%-24s %10s %20s   (sizes as stored in the traces)\n", "collectives", "count",
              "comm_size sum");
  for (const auto& [k, v] : co["by_type"].items())
    std::printf("  %-22s %10s %20s\n", k.c_str(), num(get(v, "count")).c_str(),
                num(get(v, "size")).c_str());
  for (const auto& [k, v] : co["by_group_size"].items())
    std::printf("  %-22s %10s %20s\n", ("group size " + k).c_str(), num(get(v, "count")).c_str(),
                num(get(v, "size")).c_str());
  std::printf("  %-22s %10s %20s\n", "all", num(get(co["total"], "count")).c_str(),
              num(get(co["total"], "size")).c_str());
  if (!co["group_attribute"].empty()) {
    std::string attrs;
    for (const auto& [k, v] : co["group_attribute"].items())
      attrs += (attrs.empty() ? "" : ", ") + k + " " + std::to_string(v.get<int64_t>());
    std::printf("  groups named by: %s; %lld distinct groups used\n", attrs.c_str(),
                static_cast<long long>(get(co, "groups_used")));
  }
  std::printf("\n%-24s %10s %20s\n", "point-to-point", "count", "comm_size sum");
  std::printf("  %-22s %10s %20s\n", "send", num(get(j["send"], "count")).c_str(),
              num(get(j["send"], "size")).c_str());
  std::printf("  %-22s %10s %20s\n", "recv", num(get(j["recv"], "count")).c_str(),
              num(get(j["recv"], "size")).c_str());

  if (j.contains("step"))
    std::printf("\n%s",
                report::format_step_figures(report::step_figures_from_json(j["step"])).c_str());

  const json& sg = j["structure_groups"];
  std::printf(
      "\nstructure groups: %zu (ranks whose graphs match up to ids, group ids, peers and tags)\n",
      sg.size());
  std::printf("  %-3s %-16s %7s %6s %6s %5s %5s %16s %14s %10s  %s\n", "#", "ranks", "nodes",
              "comp", "coll", "send", "recv", "num_ops", "coll size", "bytes", "hash");
  int idx = 0;
  for (const json& g : sg) {
    const json& bk = g["nodes_by_type"];
    std::printf("  %-3d %-16s %7s %6s %6s %5s %5s %16s %14s %10s  %s\n", ++idx,
                g["ranks"].get<std::string>().c_str(), num(get(g, "nodes")).c_str(),
                num(get(bk, "COMP_NODE")).c_str(), num(get(bk, "COMM_COLL_NODE")).c_str(),
                num(get(bk, "COMM_SEND_NODE")).c_str(), num(get(bk, "COMM_RECV_NODE")).c_str(),
                num(get(g, "num_ops")).c_str(), num(get(g["collectives"], "size")).c_str(),
                num(get(g, "file_bytes")).c_str(), g["structure_hash"].get<std::string>().c_str());
  }
  if (j.contains("per_rank")) {
    std::printf("\n  %-6s %-24s %7s %6s %6s %5s %5s %16s %14s %10s  %s\n", "rank", "file", "nodes",
                "comp", "coll", "send", "recv", "num_ops", "coll size", "bytes", "hash");
    for (const json& r : j["per_rank"]) {
      const json& bk = r["nodes_by_type"];
      std::printf("  %-6lld %-24s %7s %6s %6s %5s %5s %16s %14s %10s  %s\n",
                  static_cast<long long>(get(r, "rank")), r["file"].get<std::string>().c_str(),
                  num(get(r, "nodes")).c_str(), num(get(bk, "COMP_NODE")).c_str(),
                  num(get(bk, "COMM_COLL_NODE")).c_str(), num(get(bk, "COMM_SEND_NODE")).c_str(),
                  num(get(bk, "COMM_RECV_NODE")).c_str(), num(get(r, "num_ops")).c_str(),
                  num(get(r["collectives"], "size")).c_str(), num(get(r, "file_bytes")).c_str(),
                  r["structure_hash"].get<std::string>().c_str());
    }
  }
}

}  // namespace

void print_inspection(const json& j) { print_text(j); }

}  // namespace stg::tools
