// Point-to-point transfers along a mesh axis in the IR (ring attention's
// K/V chunks, models/parts/ring_attention.cc): every identity marked
// Tensor::shift (x1 as the rank `shift` steps back along an axis holds it)
// becomes a RECV from that rank, and a SEND of x1 to the rank `shift` steps
// ahead is inserted right before it. Every rank of the axis runs both, so
// the ring closes; the peers are named along the axis (mesh::Peer::along).
//
// Tags: on each stage, the k-th transfer of micro-batch m in graph order
// has tag k + K·m, K the transfers per micro-batch of the stage, which is
// how lower::FlatStage numbers the copies of a one-micro-batch template
// (template tag + (largest template tag + 1) per micro-batch). A SEND and
// its RECV have the same tag on every rank.
#pragma once

#include "stg/passes/pass.h"

namespace stg::passes {

void insert_axis_send_recv(graph::Graph& g, const mesh::Mesh& mesh);

class InsertAxisSendRecv : public Pass {
 public:
  std::string_view name() const override { return "insert-axis-send-recv"; }
  void run(graph::Graph& g, Analyses& a) override { insert_axis_send_recv(g, a.mesh()); }
};

}  // namespace stg::passes
