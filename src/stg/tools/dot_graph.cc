#include "stg/tools/dot_graph.h"

#include <cctype>
#include <map>
#include <unordered_set>

namespace stg::tools {
namespace {

// DOT string literal: quotes and backslashes escaped, line breaks as \n.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

const char* shape_of(NodeKind kind) {
  switch (kind) {
    case NodeKind::kComp:
      return "box";
    case NodeKind::kColl:
      return "hexagon";
    case NodeKind::kSend:
      return "larrow";
    case NodeKind::kRecv:
      return "rarrow";
    case NodeKind::kMemLoad:
    case NodeKind::kMemStore:
      return "cylinder";
    default:
      return "ellipse";
  }
}

std::string label_of(const TraceNode& n) {
  std::string label = n.name + "\n";
  switch (n.kind) {
    case NodeKind::kComp:
      label += "COMP " + std::to_string(n.num_ops.value_or(0)) + " ops, " +
               std::to_string(n.tensor_size.value_or(0)) + " B";
      break;
    case NodeKind::kColl:
      label += std::string(coll_name(n.comm_type.value_or(kCollUnknown))) + " " +
               std::to_string(n.comm_size.value_or(0)) + " B, group " + n.group.value_or("?");
      break;
    case NodeKind::kSend:
      label += "SEND " + std::to_string(n.comm_size.value_or(0)) + " B to " +
               std::to_string(n.comm_dst.value_or(-1)) + ", tag " +
               std::to_string(n.comm_tag.value_or(-1));
      break;
    case NodeKind::kRecv:
      label += "RECV " + std::to_string(n.comm_size.value_or(0)) + " B from " +
               std::to_string(n.comm_src.value_or(-1)) + ", tag " +
               std::to_string(n.comm_tag.value_or(-1));
      break;
    default:
      label += kind_name(n.kind);
  }
  return label;
}

void add_node(std::string& out, const TraceNode& n, const char* indent) {
  out.append(indent).append("n").append(std::to_string(n.id));
  out.append(" [shape=").append(shape_of(n.kind));
  out.append(", label=").append(quoted(label_of(n))).append("];\n");
}

}  // namespace

int64_t micro_batch_of(const std::string& node_name) {
  if (node_name.size() < 4 || node_name.compare(0, 2, "mb") != 0) return -1;
  size_t i = 2;
  int64_t k = 0;
  while (i < node_name.size() && std::isdigit(static_cast<unsigned char>(node_name[i])) &&
         k < (int64_t{1} << 40))
    k = k * 10 + (node_name[i++] - '0');
  if (i == 2 || i >= node_name.size() || node_name[i] != '.') return -1;
  return k;
}

DotGraph dot_graph(const std::vector<TraceNode>& nodes, const DotOptions& options) {
  DotGraph g;
  g.nodes = static_cast<int64_t>(nodes.size());
  g.drawn = options.max_nodes > 0 ? std::min<int64_t>(g.nodes, options.max_nodes) : g.nodes;

  // Clusters by micro-batch, in order of first appearance; the rest at top level.
  std::map<int64_t, std::vector<const TraceNode*>> by_micro_batch;
  std::vector<const TraceNode*> loose;
  std::unordered_set<uint64_t> drawn_ids;
  for (int64_t i = 0; i < g.drawn; ++i) {
    const TraceNode& n = nodes[i];
    drawn_ids.insert(n.id);
    const int64_t mb = micro_batch_of(n.name);
    (mb < 0 ? loose : by_micro_batch[mb]).push_back(&n);
  }

  std::string& out = g.text;
  out += "digraph rank {\n  rankdir=TB;\n  node [fontsize=10];\n";
  for (const auto& [mb, members] : by_micro_batch) {
    out += "  subgraph cluster_mb" + std::to_string(mb) +
           " {\n    label=" + quoted("micro-batch " + std::to_string(mb)) +
           ";\n    style=rounded;\n";
    for (const TraceNode* n : members) add_node(out, *n, "    ");
    out += "  }\n";
  }
  for (const TraceNode* n : loose) add_node(out, *n, "  ");

  for (int64_t i = 0; i < g.drawn; ++i) {
    const TraceNode& n = nodes[i];
    const std::string to = "n" + std::to_string(n.id);
    for (uint64_t d : n.data_deps)
      if (drawn_ids.count(d)) out += "  n" + std::to_string(d) + " -> " + to + ";\n";
    for (uint64_t d : n.ctrl_deps)
      if (drawn_ids.count(d)) out += "  n" + std::to_string(d) + " -> " + to + " [style=dashed];\n";
  }
  if (g.drawn < g.nodes)
    out += "  truncated [shape=note, label=" +
           quoted(std::to_string(g.nodes - g.drawn) + " more nodes not drawn (of " +
                  std::to_string(g.nodes) + "; --max_nodes 0 draws all)") +
           "];\n";
  out += "}\n";
  return g;
}

}  // namespace stg::tools
