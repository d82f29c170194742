// DualPipe's two copies of each parameter (passes/mirror_model.h): pipeline
// stage i's parameters are held by stage i (chunk 0) and by stage pp-1-i
// (chunk 1). Once per step each copy's accumulated gradient is all-reduced
// over the two ranks that hold the copies (a "dualpipe" stage group of the
// mesh: stages i and pp-1-i, one group per rank position), before the
// data-parallel reduction and the optimizer, which then read the sum; both
// copies take the same step.
//
// As tie-embeddings does, the sums wait for the pipeline flush (every send
// and receive of the stage, and the tied embeddings' sums), so that no rank
// holds its one communication slot for a sum while its partner still waits
// for its sends. Both members of a group must issue the same sequence of
// collectives on it: each stage issues its sums chained in the order of the
// pipeline stage they belong to (the lower first), each pipeline stage's
// parameters in graph order, which the two copies share.
#pragma once

#include "stg/passes/pass.h"

namespace stg::passes {

// `first_group`: the mesh group index of the stage group of stages 0 and
// pp-1 (those of stages i and pp-1-i follow it). Returns the number of
// all-reduces inserted.
int sum_mirrored_gradients(graph::Graph& g, const std::vector<int>& gradient_of, int first_group,
                           int pp);

class SumMirroredGradients : public Pass {
 public:
  explicit SumMirroredGradients(int first_group) : first_group_(first_group) {}
  std::string_view name() const override { return "sum-mirrored-gradients"; }
  void run(graph::Graph& g, Analyses& a) override {
    sum_mirrored_gradients(g, a.gradient_of(g), first_group_, static_cast<int>(a.mesh().stages()));
  }

 private:
  int first_group_;
};

}  // namespace stg::passes
