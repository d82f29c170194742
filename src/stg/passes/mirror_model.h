// DualPipe's second model copy (--pipeline_schedule dualpipe; DeepSeek-V3
// report §3.2): micro-batches enter the pipeline from both ends, so stage s
// holds pipeline stage s for those entering at stage 0 (chunk 0) and
// pipeline stage pp-1-s for those entering at stage pp-1 (chunk 1), with a
// copy of that stage's parameters of its own.
//
// The pass runs after assign-stages and copies every tensor of the graph
// right after itself: the copy is on stage pp-1-s, chunk 1, named
// "mirror." + the original's name, and reads the copies of the original's
// inputs. The graph's micro-batch replicas then each hold two micro-batches,
// one per direction (lower::replica_count). The gradients of the two copies
// of a parameter are summed by sum-mirrored-gradients.
#pragma once

#include "stg/passes/pass.h"

namespace stg::passes {

// `pp`: the pipeline stages (every tensor's stage is below it).
void mirror_model(graph::Graph& g, int pp);

class MirrorModel : public Pass {
 public:
  std::string_view name() const override { return "mirror-model"; }
  void run(graph::Graph& g, Analyses& a) override {
    mirror_model(g, static_cast<int>(a.mesh().stages()));
  }
};

}  // namespace stg::passes
