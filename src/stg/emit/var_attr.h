// The one attribute of a communication node that differs between the ranks
// of a stage: a collective's `pg_name` (its group on a mesh axis) or a
// SEND's `comm_dst` / RECV's `comm_src` (the peer rank). The stage writers
// (stage_template.h, flat_writer.h) serialise a stage's nodes once and
// encode this attribute per rank by hand; it is byte-identical to what
// libprotobuf writes for the same AttributeProto inside a Node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "stg/lower/stage_graph.h"

namespace stg::emit {

struct VarAttr {
  enum class Kind : uint8_t { kPgName, kCommDst, kCommSrc };
  Kind kind = Kind::kPgName;
  int axis = 0;     // kPgName: which group id
  mesh::Peer peer;  // kCommDst/kCommSrc
  bool operator==(const VarAttr&) const = default;

  // The attribute of a collective, SEND or RECV node.
  static VarAttr of(const LoweredNode& n);
};

// Room enough for one encoded attribute.
inline constexpr size_t kMaxVarAttrBytes = 48;

// Protobuf wire tags of the attribute framing written by hand.
inline constexpr char kNodeAttrTag = (10 << 3) | 2;  // Node.attr, length-delimited
inline constexpr char kAttrNameTag = (1 << 3) | 2;   // AttributeProto.name

// Writes the Node.attr field of AttributeProto {name, int32_val: value} at
// `out` (room for kMaxVarAttrBytes) and returns its size.
size_t encode_int32_attr(char* out, std::string_view name, int32_t value);
// The same with int64_val or uint64_val.
size_t encode_int64_attr(char* out, std::string_view name, int64_t value);
size_t encode_uint64_attr(char* out, std::string_view name, uint64_t value);

// Writes the Node.attr field (tag, length, AttributeProto) of `a` for `rank`
// at `out` and returns its size. Throws std::out_of_range when `rank` has
// no such group or peer.
size_t encode_var_attr(char* out, const VarAttr& a, const RankBinding& rank);

// A binding that knows every group and peer `nodes` name, with values
// that do not matter (for serialising a node whose variable attribute is
// then cut out or replaced).
RankBinding binding_for_layout(const std::vector<LoweredNode>& nodes);

// Protobuf base-128 varint at `p`; returns the end.
inline char* put_varint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

}  // namespace stg::emit
