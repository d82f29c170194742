// Legacy Chakra v0.0.1 writer: a stream of flat proto2 Nodes, no header
// message (docs/facts.md §5.5). Enum numbers differ from v0.0.4. The format
// has no inputs/outputs lists: TraceDetail::kSim only shortens the names.
#include <algorithm>
#include <string>
#include <string_view>

#include "et_def_v001.pb.h"
#include "stg/emit/trace_writer.h"

namespace stg::emit::detail {
namespace {

namespace pb = ChakraProtoMsgV001;

// The v0.0.1 consumer takes one bit per network dimension; the reference
// always marks three dimensions as involved.
constexpr int kInvolvedDims = 3;

pb::NodeType node_type(NodeKind kind) {
  switch (kind) {
    case NodeKind::kComp:
      return pb::COMP_NODE;
    case NodeKind::kColl:
      return pb::COMM_COLL_NODE;
    case NodeKind::kSend:
      return pb::COMM_SEND_NODE;
    case NodeKind::kRecv:
      return pb::COMM_RECV_NODE;
  }
  return pb::INVALID_NODE;
}

pb::CollectiveCommType comm_type(CollType type) {
  switch (type) {
    case CollType::kAllReduce:
      return pb::ALL_REDUCE;
    case CollType::kAllGather:
      return pb::ALL_GATHER;
    case CollType::kReduceScatter:
      return pb::REDUCE_SCATTER;
    case CollType::kAllToAll:
      return pb::ALL_TO_ALL;
  }
  return pb::INVALID_COMM;
}

// `parent` holds data deps then ctrl deps, each id once (the reference skips
// ids already present).
void add_parents(pb::Node& out, const std::vector<uint64_t>& deps) {
  auto* parent = out.mutable_parent();
  for (uint64_t d : deps) {
    if (std::find(parent->begin(), parent->end(), d) == parent->end()) {
      parent->Add(d);
    }
  }
}

void fill_node(pb::Node& out, const LoweredNode& n, const RankBinding& rank, TraceDetail detail) {
  out.set_id(n.id);
  // `name` is a required field: a short name is still written.
  const std::string_view name = node_name(n, detail);
  out.set_name(name.data(), name.size());
  out.set_node_type(node_type(n.kind));
  out.mutable_parent()->Reserve(static_cast<int>(n.data_deps.size() + n.ctrl_deps.size()));
  add_parents(out, n.data_deps);
  add_parents(out, n.ctrl_deps);

  switch (n.kind) {
    case NodeKind::kComp:
      out.set_num_ops(static_cast<uint64_t>(n.num_ops_at(0)));
      out.set_tensor_size(n.tensor_size_at(0));
      break;
    case NodeKind::kColl:
      out.set_comm_size(static_cast<uint32_t>(n.comm_size));
      out.set_comm_type(comm_type(n.coll));
      out.set_communicator_id(static_cast<uint32_t>(rank.group(n.axis)));
      for (int i = 0; i < kInvolvedDims; ++i) out.add_involved_dim(true);
      break;
    case NodeKind::kSend:
    case NodeKind::kRecv: {
      out.set_comm_size(static_cast<uint32_t>(n.comm_size));
      out.set_comm_tag(static_cast<uint32_t>(n.tag));
      const auto peer = static_cast<uint32_t>(rank.peer(n.peer));
      if (n.kind == NodeKind::kSend) {
        out.set_comm_dst(peer);
      } else {
        out.set_comm_src(peer);
      }
      break;
    }
  }
}

}  // namespace

void append_trace_v001(std::string& out, const StageGraph& stage, const RankBinding& rank,
                       TraceDetail detail) {
  pb::Node node;  // reused: Clear() keeps its allocations
  for (const LoweredNode& n : stage.nodes) {
    node.Clear();
    fill_node(node, n, rank, detail);
    append_delimited(out, node);
  }
}

}  // namespace stg::emit::detail
