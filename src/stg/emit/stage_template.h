// Chakra v0.0.4 traces of one pipeline stage, serialised once.
//
// All ranks of a stage write the same nodes except for one attribute per
// communication node: the collective's `pg_name` or the send/recv peer. Each
// node is kept as the bytes before and after that attribute; writing a rank
// encodes just the rank's attribute and splices it in. The result is
// byte-identical to serialising every node with libprotobuf (append_trace).
#pragma once

#include <string>
#include <vector>

#include "stg/lower/stage_graph.h"

namespace stg::emit {

class StageTemplate {
 public:
  explicit StageTemplate(const StageGraph& stage);

  // Appends the complete trace file of `rank` (which must be on this stage).
  void append_rank(std::string& out, const RankBinding& rank) const;
  // Upper bound of a rank's file size, for reserving buffers.
  size_t size_hint() const { return fixed_bytes_ + 32 * pieces_.size(); }

 private:
  enum class Var { kNone, kPgName, kCommDst, kCommSrc };
  struct Piece {
    std::string head;  // fields 1..9 and the attributes before the variable one
    std::string tail;  // the attributes after it
    Var var = Var::kNone;
    int axis = 0;     // kPgName: which group id
    mesh::Peer peer;  // kCommDst/kCommSrc
  };
  std::string metadata_;  // the framed GlobalMetadata
  std::vector<Piece> pieces_;
  size_t fixed_bytes_ = 0;
};

}  // namespace stg::emit
