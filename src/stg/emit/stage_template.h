// Chakra v0.0.4 traces of one pipeline stage, serialised once.
//
// All ranks of a stage write the same nodes except for one attribute per
// communication node: the collective's `pg_name` or the send/recv peer. The
// template keeps the stage's file as one byte string in file order: the
// framed metadata and compute nodes as they are, and for each communication
// node the bytes before and after that attribute. Writing a rank copies the
// fixed runs and, per communication node, encodes the rank's attribute and
// the node's length prefix. The result is byte-identical to serialising
// every node with libprotobuf (append_trace with the same TraceDetail).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stg/emit/var_attr.h"
#include "stg/lower/stage_graph.h"
#include "stg/trace_format.h"

namespace stg::emit {

class StageTemplate {
 public:
  // Built piece by piece by the one v0.0.4 encoder (emit/flat_writer.h;
  // emit::stage_template for a lowered stage): bytes written as they are
  // (framed nodes, the metadata), and nodes with a variable attribute, given
  // as the encoded node without it split where it goes (before it: fields
  // 1..5 and the attributes before it; after it: the attributes after it).
  StageTemplate() = default;
  void add_bytes(std::string_view bytes) { blob_ += bytes; }
  void add_var_node(std::string_view head, const VarAttr& key, std::string_view tail);
  void clear();
  // Bytes held (about a rank's file size).
  size_t size() const { return blob_.size(); }

  // Appends the complete trace file of `rank` (which must be on this stage).
  void append_rank(std::string& out, const RankBinding& rank) const;
  // Upper bound of a rank's file size, for reserving buffers.
  size_t size_hint() const { return blob_.size() + kMaxVarBytes * vars_.size(); }

 private:
  // Per communication node: its length prefix (<= 10 bytes) and the variable
  // attribute.
  static constexpr size_t kMaxVarBytes = 16 + kMaxVarAttrBytes;
  struct VarNode {
    size_t head = 0;         // offset in blob_ of the node's bytes before the attribute
    uint32_t head_size = 0;  // fields 1..5 and the attributes before the variable one
    uint32_t tail_size = 0;  // the attributes after it; they follow the head in blob_
    uint32_t key = 0;        // index into keys_ (a stage has few distinct ones)
  };
  // Metadata, framed compute nodes, heads and tails of the communication
  // nodes, in file order; what lies between two heads is copied verbatim.
  std::string blob_;
  std::vector<VarNode> vars_;
  std::vector<VarAttr> keys_;

  // Writes everything up to the last communication node's head and
  // attribute at `p`; `pos` is set to the blob_ offset copied up to.
  char* append_vars(char* p, const RankBinding& rank, size_t& pos) const;
};

}  // namespace stg::emit
