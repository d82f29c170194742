// The `stg inspect --json` layout of an InspectReport.
#include <cstdio>
#include <string>

#include "stg/tools/inspect.h"

namespace stg::tools {
namespace {

using json = nlohmann::ordered_json;

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string coll_key(int c) { return c == -1 ? "MISSING" : coll_name(c); }

json count_size_json(const CountSize& c) { return json{{"count", c.count}, {"size", c.size}}; }

json spread_json(const Spread& s) {
  return json{{"total", s.total}, {"min", s.min}, {"max", s.max}};
}

json file_json(const InspectFile& f) {
  json by_kind = json::object();
  for (NodeKind k : kNodeKindOrder)
    if (f.by_kind(k)) by_kind[kind_name(k)] = f.by_kind(k);
  return json{{"rank", f.rank},
              {"file", f.file},
              {"format", format_name(f.format)},
              {"file_bytes", f.file_bytes},
              {"nodes", f.nodes},
              {"nodes_by_type", by_kind},
              {"num_ops", f.num_ops},
              {"tensor_size", f.tensor_size},
              {"collectives", count_size_json(f.collectives)},
              {"send", count_size_json(f.send)},
              {"recv", count_size_json(f.recv)},
              {"nodes_missing_attributes", f.nodes_missing_attributes},
              {"structure_hash", hex16(f.structure_hash)}};
}

json structure_group_json(const StructureGroup& g) {
  json j = file_json(g.first);
  j.erase("rank");
  j.erase("file");
  j.erase("format");
  j["ranks"] = ranks_text(g.ranks);
  j["num_ranks"] = static_cast<int64_t>(g.ranks.size());
  j["first_rank"] = g.first.rank;
  return j;
}

json comm_group_json(const std::optional<CommGroupSummary>& s) {
  if (!s) return nullptr;
  json by_size = json::object();
  for (const auto& [size, count] : s->groups_by_size) by_size[std::to_string(size)] = count;
  return json{{"file", s->file}, {"groups", s->groups}, {"groups_by_size", by_size}};
}

json collectives_json(const CollectiveFigures& c) {
  json by_type = json::object();
  for (const auto& [k, v] : c.by_type) by_type[coll_key(k)] = count_size_json(v);
  json by_group_size = json::object();
  for (const auto& [k, v] : c.by_group_size)
    by_group_size[k < 0 ? std::string("unknown") : std::to_string(k)] = count_size_json(v);
  return json{{"total", count_size_json(c.total)},
              {"by_type", by_type},
              {"by_group_size", by_group_size},
              {"group_attribute", c.by_group_attr},
              {"groups_used", c.groups_used}};
}

json nodes_by_type_json(const InspectReport& r) {
  json j = json::object();
  for (NodeKind k : kNodeKindOrder) {
    const Spread& s = r.nodes_by_kind[static_cast<int>(k)];
    if (s.total) j[kind_name(k)] = spread_json(s);
  }
  return j;
}

}  // namespace

json to_json(const InspectReport& r) {
  json out = json::object();
  out["directory"] = r.directory;
  if (!r.listed) {
    out["errors"] = r.errors;
    return out;
  }
  out["ranks"] = static_cast<int64_t>(r.ranks.size());
  out["rank_list"] = ranks_text(r.ranks);
  if (!r.missing_ranks.empty()) out["missing_ranks"] = ranks_text(r.missing_ranks);
  out["formats"] = r.formats;
  if (!r.metadata.empty()) out["metadata"] = r.metadata;
  out["comm_group_file"] = comm_group_json(r.comm_group_file);
  out["file_bytes"] = spread_json(r.file_bytes);
  out["nodes"] = spread_json(r.nodes);
  out["nodes_by_type"] = nodes_by_type_json(r);
  out["nodes_missing_attributes"] = r.nodes_missing_attributes;
  out["compute"] = json{{"num_ops", report::to_json(r.compute.num_ops)},
                        {"num_ops_min", r.compute.num_ops_min},
                        {"num_ops_max", r.compute.num_ops_max},
                        {"tensor_size", r.compute.tensor_size}};
  out["collectives"] = collectives_json(r.collectives);
  out["send"] = count_size_json(r.send);
  out["recv"] = count_size_json(r.recv);
  out["step"] = report::to_json(r.step);
  json groups = json::array();
  for (const StructureGroup& g : r.structure_groups) groups.push_back(structure_group_json(g));
  out["structure_groups"] = groups;
  if (r.per_rank) {
    json files = json::array();
    for (const InspectFile& f : *r.per_rank) files.push_back(file_json(f));
    out["per_rank"] = files;
  }
  out["errors"] = r.errors;
  return out;
}

}  // namespace stg::tools
