// Tied embeddings on stages apart (--framework megatron, pp > 1): the first
// and the last stage each hold a copy of the shared weight (Tensor::tied).
// After the pipeline flush each copy's accumulated gradient is all-reduced
// over the group of the two copies (Megatron-LM's embedding group, a stage
// group of the mesh), once per step, and the update reads the sum.
//
// "After the flush": the all-reduce waits for every send and receive of its
// stage. Megatron-LM reduces it once the step's forward and backward passes
// are done; and in a simulator that gives a rank one communication slot, an
// all-reduce the last stage issued before its last backward sends would wait
// for the first stage, which waits for those sends. So the pass runs after
// insert-send-recv.
#pragma once

#include "stg/passes/pass.h"

namespace stg::passes {

// `group`: the mesh group index of the embedding group (mesh::Mesh's stage
// groups follow its axes). Returns the number of collectives inserted.
int tie_embeddings(graph::Graph& g, const std::vector<int>& gradient_of, int group);

class TieEmbeddings : public Pass {
 public:
  explicit TieEmbeddings(int group) : group_(group) {}
  std::string_view name() const override { return "tie-embeddings"; }
  void run(graph::Graph& g, Analyses& a) override { tie_embeddings(g, a.gradient_of(g), group_); }

 private:
  int group_;
};

}  // namespace stg::passes
