// Chakra v0.0.4 writer: GlobalMetadata, then one Node per LoweredNode with
// the attribute names, value types and order of docs/facts.md §5.3 (§5.9 for
// TraceDetail::kSim: the same without inputs, outputs and op_type).
#include "stg/emit/et_v004.h"

#include <string>
#include <string_view>
#include <vector>

#include "et_def_v004.pb.h"
#include "stg/emit/trace_writer.h"

namespace stg::emit::detail {
namespace {

namespace pb = ChakraProtoMsg;

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
  return pb::ALL_REDUCE;
}

pb::AttributeProto* add_attr(pb::Node& node, const char* name) {
  pb::AttributeProto* attr = node.add_attr();
  attr->set_name(name);
  return attr;
}

// Flat [name, size, name, size, ...] list. An empty list leaves the oneof
// unset (only the name is written), as the reference does.
void add_tensor_list(pb::Node& node, const char* name, const std::vector<TensorInfoRef>& tensors) {
  pb::AttributeProto* attr = add_attr(node, name);
  if (tensors.empty()) return;
  auto* values = attr->mutable_string_list()->mutable_values();
  values->Reserve(static_cast<int>(2 * tensors.size()));
  for (const TensorInfoRef& t : tensors) {
    values->Add()->assign(t->name);
    values->Add()->assign(t->size);
  }
}

}  // namespace

int fill_node_v004(pb::Node& out, const LoweredNode& n, const RankBinding& rank, TraceDetail detail,
                   bool feeder_attributes) {
  // is_cpu_op: the reference writes int32_val, Chakra's schema and ETFeeder
  // bool_val (which reads an int32_val as false: the same value).
  auto is_cpu_op = [&] {
    if (feeder_attributes)
      add_attr(out, "is_cpu_op")->set_bool_val(false);
    else
      add_attr(out, "is_cpu_op")->set_int32_val(0);
  };
  const bool full = detail == TraceDetail::kFull;
  out.set_id(n.id);
  const std::string_view name = node_name(n, detail);
  out.set_name(name.data(), name.size());
  out.set_type(node_type(n.kind));
  out.mutable_data_deps()->Add(n.data_deps.begin(), n.data_deps.end());
  out.mutable_ctrl_deps()->Add(n.ctrl_deps.begin(), n.ctrl_deps.end());

  if (full) {
    add_tensor_list(out, "inputs", n.inputs);
    add_tensor_list(out, "outputs", n.outputs);
  }
  int var_attr = -1;
  switch (n.kind) {
    case NodeKind::kComp:
      if (const uint64_t micros = n.duration_micros_at(0)) out.set_duration_micros(micros);
      add_attr(out, "num_ops")->set_int64_val(n.num_ops_at(0));
      add_attr(out, "tensor_size")->set_uint64_val(n.tensor_size_at(0));
      if (full) add_attr(out, "op_type")->set_string_val(n.op_type);
      break;
    case NodeKind::kColl:
      add_attr(out, "comm_size")->set_int64_val(n.comm_size);
      // Explicit even for ALL_REDUCE (0): oneof members are always written.
      add_attr(out, "comm_type")->set_int64_val(comm_type(n.coll));
      var_attr = out.attr_size();
      add_attr(out, "pg_name")->set_string_val(std::to_string(rank.group(n.axis)));
      is_cpu_op();
      if (feeder_attributes) add_attr(out, "comm_priority")->set_int32_val(0);
      break;
    case NodeKind::kSend:
    case NodeKind::kRecv:
      add_attr(out, "comm_size")->set_int64_val(n.comm_size);
      add_attr(out, "comm_tag")->set_int32_val(n.tag);
      var_attr = out.attr_size();
      add_attr(out, n.kind == NodeKind::kSend ? "comm_dst" : "comm_src")
          ->set_int32_val(static_cast<int32_t>(rank.peer(n.peer)));
      is_cpu_op();
      if (feeder_attributes) add_attr(out, "comm_priority")->set_int32_val(0);
      break;
  }
  return var_attr;
}

void append_metadata_v004(std::string& out) {
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  pb::AttributeProto* schema = meta.add_attr();
  schema->set_name("schema");
  schema->set_string_val("stg");
  append_delimited(out, meta);
}

void append_trace_v004(std::string& out, const StageGraph& stage, const RankBinding& rank,
                       TraceDetail detail) {
  append_metadata_v004(out);

  // One message reused for all nodes: Clear() keeps its allocations.
  pb::Node node;
  for (const LoweredNode& n : stage.nodes) {
    node.Clear();
    fill_node_v004(node, n, rank, detail, stage.feeder_attributes);
    append_delimited(out, node);
  }
}

}  // namespace stg::emit::detail
