#include "stg/emit/stage_template.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "et_def_v004.pb.h"
#include "stg/emit/trace_writer.h"

namespace stg::emit {

namespace pb = ChakraProtoMsg;

namespace detail {
void fill_node_v004(pb::Node& out, const LoweredNode& n, const RankBinding& rank);
void append_metadata_v004(std::string& out);
}  // namespace detail

namespace {

// Index of the rank-dependent attribute in the node's attr list (the order
// of et_v004.cc: inputs, outputs, comm_size, comm_type|comm_tag, <var>, ...).
constexpr int kVarAttr = 4;

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

}  // namespace

StageTemplate::StageTemplate(const StageGraph& stage) {
  detail::append_metadata_v004(metadata_);
  fixed_bytes_ = metadata_.size();
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
  pb::Node node;
  pieces_.reserve(stage.nodes.size());
  for (const LoweredNode& n : stage.nodes) {
    node.Clear();
    detail::fill_node_v004(node, n, dummy);
    Piece piece;
    if (n.kind == NodeKind::kComp) {
      node.SerializeToString(&piece.head);
    } else {
      piece.var = n.kind == NodeKind::kColl   ? Var::kPgName
                  : n.kind == NodeKind::kSend ? Var::kCommDst
                                              : Var::kCommSrc;
      piece.axis = static_cast<int>(n.axis);
      piece.peer = n.peer;
      pb::Node tail;
      for (int i = kVarAttr + 1; i < node.attr_size(); ++i) *tail.add_attr() = node.attr(i);
      node.mutable_attr()->DeleteSubrange(kVarAttr, node.attr_size() - kVarAttr);
      node.SerializeToString(&piece.head);
      tail.SerializeToString(&piece.tail);
    }
    fixed_bytes_ += piece.head.size() + piece.tail.size() + 10;
    pieces_.push_back(std::move(piece));
  }
}

void StageTemplate::append_rank(std::string& out, const RankBinding& rank) const {
  out.reserve(out.size() + size_hint());
  out += metadata_;
  char var[64];
  for (const Piece& piece : pieces_) {
    size_t var_size = 0;
    if (piece.var != Var::kNone) {
      // AttributeProto bytes: name, then the value.
      char attr[48];
      char* p = attr;
      const bool is_group = piece.var == Var::kPgName;
      const char* name = is_group                     ? "pg_name"
                         : piece.var == Var::kCommDst ? "comm_dst"
                                                      : "comm_src";
      const size_t name_len = std::strlen(name);
      *p++ = static_cast<char>(kAttrNameTag);
      p = put_varint(p, name_len);
      std::memcpy(p, name, name_len);
      p += name_len;
      if (is_group) {
        char digits[24];
        auto [end, ec] = std::to_chars(digits, digits + sizeof digits, rank.group(piece.axis));
        p = put_varint(p, kAttrStringTag);
        p = put_varint(p, static_cast<uint64_t>(end - digits));
        std::memcpy(p, digits, end - digits);
        p += end - digits;
      } else {
        *p++ = static_cast<char>(kAttrInt32Tag);
        // int32 values are sign-extended to 64 bits on the wire.
        const auto peer = static_cast<int32_t>(rank.peer(piece.peer));
        p = put_varint(p, static_cast<uint64_t>(static_cast<int64_t>(peer)));
      }
      const size_t attr_size = static_cast<size_t>(p - attr);
      char* q = var;
      *q++ = static_cast<char>(kNodeAttrTag);
      q = put_varint(q, attr_size);
      std::memcpy(q, attr, attr_size);
      var_size = static_cast<size_t>(q - var) + attr_size;
    }
    const size_t total = piece.head.size() + var_size + piece.tail.size();
    char prefix[10];
    out.append(prefix, put_varint(prefix, total) - prefix);
    out += piece.head;
    out.append(var, var_size);
    out += piece.tail;
  }
}

}  // namespace stg::emit
