#include "stg/emit/var_attr.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace stg::emit {
namespace {

// Protobuf wire tags of the fields written by hand.
constexpr uint8_t kNodeAttrTag = (10 << 3) | 2;     // Node.attr, length-delimited
constexpr uint8_t kAttrNameTag = (1 << 3) | 2;      // AttributeProto.name
constexpr uint8_t kAttrInt32Tag = (7 << 3) | 0;     // AttributeProto.int32_val
constexpr uint16_t kAttrStringTag = (29 << 3) | 2;  // AttributeProto.string_val (2-byte varint)

char* put_bytes(char* p, const char* src, size_t n) {
  std::memcpy(p, src, n);
  return p + n;
}

}  // namespace

VarAttr VarAttr::of(const LoweredNode& n) {
  VarAttr a;
  if (n.kind == NodeKind::kColl) {
    a.kind = Kind::kPgName;
    a.axis = n.axis;
  } else {
    a.kind = n.kind == NodeKind::kSend ? Kind::kCommDst : Kind::kCommSrc;
    a.peer = n.peer;
  }
  return a;
}

RankBinding binding_for_layout(const std::vector<LoweredNode>& nodes) {
  RankBinding dummy;
  size_t axes = 0, stages = 0;
  for (const LoweredNode& n : nodes) {
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
  return dummy;
}

size_t encode_var_attr(char* out, const VarAttr& a, const RankBinding& rank) {
  char attr[40];
  char* p = attr;
  const bool is_group = a.kind == VarAttr::Kind::kPgName;
  const char* name = is_group                            ? "pg_name"
                     : a.kind == VarAttr::Kind::kCommDst ? "comm_dst"
                                                         : "comm_src";
  const size_t name_len = is_group ? 7 : 8;
  *p++ = static_cast<char>(kAttrNameTag);
  p = put_varint(p, name_len);
  p = put_bytes(p, name, name_len);
  if (is_group) {
    char digits[20];
    auto [end, ec] = std::to_chars(digits, digits + sizeof digits, rank.group(a.axis));
    p = put_varint(p, kAttrStringTag);
    p = put_varint(p, static_cast<uint64_t>(end - digits));
    p = put_bytes(p, digits, static_cast<size_t>(end - digits));
  } else {
    *p++ = static_cast<char>(kAttrInt32Tag);
    // int32 values are sign-extended to 64 bits on the wire.
    const auto peer = static_cast<int32_t>(rank.peer(a.peer));
    p = put_varint(p, static_cast<uint64_t>(static_cast<int64_t>(peer)));
  }
  char* e = out;
  *e++ = static_cast<char>(kNodeAttrTag);
  e = put_varint(e, static_cast<uint64_t>(p - attr));
  e = put_bytes(e, attr, static_cast<size_t>(p - attr));
  return static_cast<size_t>(e - out);
}

}  // namespace stg::emit
