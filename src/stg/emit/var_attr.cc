#include "stg/emit/var_attr.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace stg::emit {
namespace {

// Protobuf wire tags of the values written by hand.
constexpr uint8_t kAttrInt32Tag = (7 << 3) | 0;     // AttributeProto.int32_val
constexpr uint8_t kAttrInt64Tag = (9 << 3) | 0;     // AttributeProto.int64_val
constexpr uint8_t kAttrUint64Tag = (13 << 3) | 0;   // AttributeProto.uint64_val
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

namespace {

// Node.attr framing (tag, length) of the AttributeProto bytes [attr, end).
size_t frame_attr(char* out, const char* attr, const char* end) {
  char* e = out;
  *e++ = kNodeAttrTag;
  e = put_varint(e, static_cast<uint64_t>(end - attr));
  e = put_bytes(e, attr, static_cast<size_t>(end - attr));
  return static_cast<size_t>(e - out);
}

// AttributeProto.name at `p`; returns the end.
char* put_name(char* p, std::string_view name) {
  *p++ = kAttrNameTag;
  p = put_varint(p, name.size());
  return put_bytes(p, name.data(), name.size());
}

}  // namespace

size_t encode_int32_attr(char* out, std::string_view name, int32_t value) {
  char attr[40];
  char* p = put_name(attr, name);
  *p++ = static_cast<char>(kAttrInt32Tag);
  // int32 values are sign-extended to 64 bits on the wire.
  p = put_varint(p, static_cast<uint64_t>(static_cast<int64_t>(value)));
  return frame_attr(out, attr, p);
}

size_t encode_int64_attr(char* out, std::string_view name, int64_t value) {
  char attr[40];
  char* p = put_name(attr, name);
  *p++ = static_cast<char>(kAttrInt64Tag);
  p = put_varint(p, static_cast<uint64_t>(value));
  return frame_attr(out, attr, p);
}

size_t encode_uint64_attr(char* out, std::string_view name, uint64_t value) {
  char attr[40];
  char* p = put_name(attr, name);
  *p++ = static_cast<char>(kAttrUint64Tag);
  p = put_varint(p, value);
  return frame_attr(out, attr, p);
}

size_t encode_var_attr(char* out, const VarAttr& a, const RankBinding& rank) {
  if (a.kind != VarAttr::Kind::kPgName)
    return encode_int32_attr(out, a.kind == VarAttr::Kind::kCommDst ? "comm_dst" : "comm_src",
                             static_cast<int32_t>(rank.peer(a.peer)));
  char attr[40];
  char* p = put_name(attr, "pg_name");
  char digits[20];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, rank.group(a.axis));
  p = put_varint(p, kAttrStringTag);
  p = put_varint(p, static_cast<uint64_t>(end - digits));
  p = put_bytes(p, digits, static_cast<size_t>(end - digits));
  return frame_attr(out, attr, p);
}

}  // namespace stg::emit
