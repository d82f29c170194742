// Activation recomputation: the forward pass of every block (per micro-batch)
// runs again right before the block's backward pass, and the backward pass
// reads the recomputed activations instead of stored ones. Only the block's
// input (the checkpoint) is kept from the first forward pass.
//
// "Right before": the recomputed ops that depend on nothing else recomputed
// wait for the gradient entering the block, so the recomputation starts when
// the backward pass reaches the block.
//
// As activation checkpointing runs it (`checkpointed`, Megatron-LM's
// CheckpointFunction and tensor_parallel.checkpoint): a recomputed region
// (the block, or with `selective` its attention core) is re-run when the
// backward reaches the region, that is when the gradients of the region's
// outputs are there, and the region's backward (the backward tensors that
// are gradients of its tensors, from the first of them on) starts when the
// whole recomputed region is done. Without it the backward ops that read no
// recomputed value (input gradients, which stg's ops do not connect to the
// stored activations) run ahead of the recomputation, and the weight
// gradients and their reductions after it: a reordering that Megatron-LM
// does not do, which made a step with recomputation shorter in ASTRA-sim's
// one communication slot (issue 30 point 3).
#pragma once

#include "stg/passes/pass.h"

namespace stg::passes {

// Returns the number of tensors recomputed. `selective`: only the tensors
// marked Tensor::selective_recompute (the attention core, Korthikanti et
// al.), not the block's whole forward pass.
int add_recomputation(graph::Graph& g, bool selective = false, bool checkpointed = false);

class AddRecomputation : public Pass {
 public:
  explicit AddRecomputation(bool selective = false, bool checkpointed = false)
      : selective_(selective), checkpointed_(checkpointed) {}
  std::string_view name() const override {
    return selective_ ? "recompute-selective" : "recompute";
  }
  void run(graph::Graph& g, Analyses&) override { add_recomputation(g, selective_, checkpointed_); }

 private:
  bool selective_, checkpointed_;
};

}  // namespace stg::passes
