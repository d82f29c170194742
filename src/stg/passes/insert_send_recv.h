// Pipeline communication in the IR: every input read across stages (x1, x2
// or an extra dependency) becomes a SEND op on the producer's stage and a
// RECV op on the consumer's, with the same tag; consumers then read the
// RECV (docs/facts.md §7).
//
// One RECV per (stage, remote producer), placed before its first consumer;
// the SENDs of a producer follow it. Tags are numbered from 0, stage by
// stage in graph order of first use, the same on every rank. The peer of
// both ends is named by stage (mesh::Peer::on_stage).
#pragma once

#include "stg/passes/pass.h"

namespace stg::passes {

void insert_send_recv(graph::Graph& g);

class InsertSendRecv : public Pass {
 public:
  std::string_view name() const override { return "insert-send-recv"; }
  void run(graph::Graph& g, Analyses&) override { insert_send_recv(g); }
};

}  // namespace stg::passes
