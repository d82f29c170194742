#include "stg/emit/stage_template.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <vector>

#include "et_def_v004.pb.h"
#include "stg/emit/trace_writer.h"

namespace stg::emit {

namespace pb = ChakraProtoMsg;

namespace detail {
// et_v004.cc: fills `out` and returns the index of the rank-dependent
// attribute in its attr list (-1 for a compute node). The index depends on
// the detail level (full: after inputs and outputs), hence it is asked for
// rather than assumed.
int fill_node_v004(pb::Node& out, const LoweredNode& n, const RankBinding& rank,
                   TraceDetail detail);
void append_metadata_v004(std::string& out);
}  // namespace detail

namespace {

// Protobuf wire tags used to encode the variable attribute by hand.
constexpr uint8_t kNodeAttrTag = (10 << 3) | 2;     // Node.attr, length-delimited
constexpr uint8_t kAttrNameTag = (1 << 3) | 2;      // AttributeProto.name
constexpr uint8_t kAttrInt32Tag = (7 << 3) | 0;     // AttributeProto.int32_val
constexpr uint16_t kAttrStringTag = (29 << 3) | 2;  // AttributeProto.string_val (2-byte varint)

char* put_varint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

char* put_bytes(char* p, const char* src, size_t n) {
  std::memcpy(p, src, n);
  return p + n;
}

}  // namespace

StageTemplate::StageTemplate(const StageGraph& stage, TraceDetail detail) {
  detail::append_metadata_v004(blob_);
  // A binding whose values do not matter (the variable attribute is cut
  // out) but that knows every group and peer the nodes name.
  RankBinding dummy;
  size_t axes = 0, stages = 0;
  for (const LoweredNode& n : stage.nodes) {
    if (n.kind == NodeKind::kColl) axes = std::max(axes, static_cast<size_t>(n.axis) + 1);
    if (n.kind == NodeKind::kSend || n.kind == NodeKind::kRecv) {
      if (n.peer.kind == mesh::Peer::Kind::kStage)
        stages = std::max(stages, static_cast<size_t>(n.peer.stage) + 1);
      else
        axes = std::max(axes, static_cast<size_t>(n.peer.axis) + 1);
    }
  }
  dummy.group_id.assign(axes, 0);
  dummy.coord.assign(axes, 0);
  dummy.degree.assign(axes, 1);
  dummy.stride.assign(axes, 1);
  dummy.rank_on_stage.assign(stages, 0);
  pb::Node node, tail;
  std::string bytes;
  for (const LoweredNode& n : stage.nodes) {
    node.Clear();
    const int var_attr = detail::fill_node_v004(node, n, dummy, detail);
    if (var_attr < 0) {
      detail::append_delimited(blob_, node);
      continue;
    }
    VarKey key;
    if (n.kind == NodeKind::kColl) {
      key.var = VarKey::Var::kPgName;
      key.axis = n.axis;
    } else {
      key.var = n.kind == NodeKind::kSend ? VarKey::Var::kCommDst : VarKey::Var::kCommSrc;
      key.peer = n.peer;
    }
    VarNode v;
    v.key = static_cast<uint32_t>(std::find(keys_.begin(), keys_.end(), key) - keys_.begin());
    if (v.key == keys_.size()) keys_.push_back(key);
    // Attributes are field 10, written after every other field, so the
    // node's bytes split at the variable attribute into the node without
    // it and the following attributes (serialised as a Node of only those).
    tail.Clear();
    for (int i = var_attr + 1; i < node.attr_size(); ++i) *tail.add_attr() = node.attr(i);
    node.mutable_attr()->DeleteSubrange(var_attr, node.attr_size() - var_attr);
    v.head = blob_.size();
    bytes.clear();
    node.SerializeToString(&bytes);
    v.head_size = static_cast<uint32_t>(bytes.size());
    blob_ += bytes;
    bytes.clear();
    tail.SerializeToString(&bytes);
    v.tail_size = static_cast<uint32_t>(bytes.size());
    blob_ += bytes;
    vars_.push_back(v);
  }
}

void StageTemplate::append_rank(std::string& out, const RankBinding& rank) const {
  const size_t start = out.size();
  out.resize(start + size_hint());
  char* p = out.data() + start;
  const char* blob = blob_.data();
  size_t pos = 0;  // blob_ bytes copied so far
  try {
    p = append_vars(p, rank, pos);
  } catch (...) {
    out.resize(start);  // a group or peer the binding lacks: leave `out` as it was
    throw;
  }
  p = put_bytes(p, blob + pos, blob_.size() - pos);
  out.resize(static_cast<size_t>(p - out.data()));
}

char* StageTemplate::append_vars(char* p, const RankBinding& rank, size_t& pos) const {
  // This rank's variable attributes, each encoded once: Node.attr tag,
  // length, then the AttributeProto (name, value).
  struct Encoded {
    char bytes[40];
    uint32_t size;
  };
  std::vector<Encoded> encoded(keys_.size());
  for (size_t k = 0; k < keys_.size(); ++k) {
    const VarKey& key = keys_[k];
    char attr[36];
    char* a = attr;
    const bool is_group = key.var == VarKey::Var::kPgName;
    const char* name = is_group                           ? "pg_name"
                       : key.var == VarKey::Var::kCommDst ? "comm_dst"
                                                          : "comm_src";
    const size_t name_len = is_group ? 7 : 8;
    *a++ = static_cast<char>(kAttrNameTag);
    a = put_varint(a, name_len);
    a = put_bytes(a, name, name_len);
    if (is_group) {
      char digits[20];
      auto [end, ec] = std::to_chars(digits, digits + sizeof digits, rank.group(key.axis));
      a = put_varint(a, kAttrStringTag);
      a = put_varint(a, static_cast<uint64_t>(end - digits));
      a = put_bytes(a, digits, static_cast<size_t>(end - digits));
    } else {
      *a++ = static_cast<char>(kAttrInt32Tag);
      // int32 values are sign-extended to 64 bits on the wire.
      const auto peer = static_cast<int32_t>(rank.peer(key.peer));
      a = put_varint(a, static_cast<uint64_t>(static_cast<int64_t>(peer)));
    }
    char* e = encoded[k].bytes;
    *e++ = static_cast<char>(kNodeAttrTag);
    e = put_varint(e, static_cast<uint64_t>(a - attr));
    e = put_bytes(e, attr, static_cast<size_t>(a - attr));
    encoded[k].size = static_cast<uint32_t>(e - encoded[k].bytes);
  }

  const char* blob = blob_.data();
  for (const VarNode& v : vars_) {
    const Encoded& var = encoded[v.key];
    p = put_bytes(p, blob + pos, v.head - pos);
    p = put_varint(p, uint64_t{v.head_size} + var.size + v.tail_size);
    p = put_bytes(p, blob + v.head, v.head_size);
    p = put_bytes(p, var.bytes, var.size);
    pos = v.head + v.head_size;
  }
  return p;
}

}  // namespace stg::emit
