// Activation recomputation: the forward pass of every block (per micro-batch)
// runs again right before the block's backward pass, and the backward pass
// reads the recomputed activations instead of stored ones. Only the block's
// input (the checkpoint) is kept from the first forward pass.
//
// "Right before": the recomputed ops that depend on nothing else recomputed
// wait for the gradient entering the block, so the recomputation starts when
// the backward pass reaches the block.
#pragma once

#include "stg/passes/pass.h"

namespace stg::passes {

// Returns the number of tensors recomputed. `selective`: only the tensors
// marked Tensor::selective_recompute (the attention core, Korthikanti et
// al.), not the block's whole forward pass.
int add_recomputation(graph::Graph& g, bool selective = false);

class AddRecomputation : public Pass {
 public:
  explicit AddRecomputation(bool selective = false) : selective_(selective) {}
  std::string_view name() const override {
    return selective_ ? "recompute-selective" : "recompute";
  }
  void run(graph::Graph& g, Analyses&) override { add_recomputation(g, selective_); }

 private:
  bool selective_;
};

}  // namespace stg::passes
