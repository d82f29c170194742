// Communication in the IR: the attributes of the collective and
// point-to-point ops (Op::kCollective, kSend, kRecv) that the passes
// insert_collectives and insert_send_recv add (docs/facts.md §3, §7).
#pragma once

#include <string>

#include "stg/mesh/peer.h"

namespace stg::graph {

enum class CollType { kAllReduce, kAllGather, kReduceScatter, kAllToAll };

const char* coll_name(CollType type);  // "ALL_REDUCE", ...

struct Comm {
  CollType type = CollType::kAllReduce;  // kCollective
  int axis = -1;                         // kCollective: the mesh axis of its group
  mesh::Peer peer;                       // kSend, kRecv
  int tag = 0;                           // kSend, kRecv: pairs a send with its recv
  // The trace node's name. Comm ops are named after the op they serve, in
  // the reference's style ("x@0_X1COMM", "y@0_Y_SEND", "shadow_y@0_Y_RECV").
  std::string label;
  int32_t label_number_at = -1;  // Tensor::number_at, for the label
  int32_t label_step_at = -1;    // Tensor::step_at, for the label
};

}  // namespace stg::graph
