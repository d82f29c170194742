// Vocabulary-parallel layers, as Megatron-LM builds them (docs/megatron.md):
// a vocabulary-parallel input embedding that is a lookup, and a
// vocabulary-parallel output layer with its loss. Both weights are
// [Dvocal/tp, Dmodel], so that tied embeddings can share one.
#pragma once

#include "stg/graph/graph.h"

namespace stg::models {

// Tensors: weight "w", output "y" (a partial sum over tp: each rank looks up
// only the tokens of its vocabulary rows), output gradient "dy", weight
// gradient "dw" (a scatter-add, one addition per gradient element).
graph::Graph vocab_parallel_input_embedding();

// Tensors: input "x" and its gradient "dx" in the blocks' activation layout
// (sequence-sharded over tp with `tpsp`), weight "w" and its gradient "dw";
// logits and loss over the rank's Dvocal/tp vocabulary columns. Without
// the loss (`training` false, serving): the forward pass up to the logits.
graph::Graph vocab_parallel_output_layer(bool tpsp, bool training = true);

}  // namespace stg::models
