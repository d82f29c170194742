// Weight-gradient input all-gathers issued in the backward (--framework
// megatron). With sequence parallelism a column-parallel linear layer's
// weight gradient reads its input gathered over tp; insert-collectives
// gives that gradient its own all-gather of the (forward or recomputed)
// input, which is ready as soon as the input is. Issued then, it takes a
// rank's one communication slot ahead of the backward's critical-path
// collectives (ASTRA-sim issues the lowest-id ready node first).
// Megatron-LM gathers it in the backward, once the output gradient is
// there, and overlaps it with the input-gradient GEMM
// (LinearWithGradAccumulationAndAsyncCommunication).
//
// The pass gives every such all-gather a dependency on the output gradient
// it is contracted with: the other operand of the weight-gradient
// contraction. An all-gather counts when it is backward work only weight
// gradients need (graph::weight_gradient_work), so the gather of an output
// gradient that the input gradient also reads is left alone.
#pragma once

#include "stg/passes/pass.h"

namespace stg::passes {

// Returns the number of all-gathers given a dependency.
int defer_weight_gradient_gathers(graph::Graph& g);

class DeferWeightGradientGathers : public Pass {
 public:
  std::string_view name() const override { return "defer-weight-gradient-gathers"; }
  void run(graph::Graph& g, Analyses&) override { defer_weight_gradient_gathers(g); }
};

}  // namespace stg::passes
