// Flat weight sharding of one transformer block, as the later reference
// builds every block (its `fsdp` symbol is later bound to dp with
// --weight_sharded, else to 1):
//  - the block's weights become one flat tensor `_sharded_weight` of
//    sum(weight sizes)/fsdp elements, assembled (`_assembled_weight`, an
//    all-gather over dp when sharded) before the forward pass and again
//    (`_assembled_weight_backward`) before the backward pass, which reads
//    per-weight copies `_<weight>_backward`;
//  - the weight gradients are gathered into `_assembled_grad` and read back
//    as `_sharded_grad` (reduce-scatter when sharded, all-reduce when not),
//    the gradient of the flat weight, sharded by the symbol `gshard` (dp
//    with FSDP or ZeRO-2, else 1).
// With `reduce_per_step` (--framework megatron, ZeRO 0-2) `_sharded_grad`
// keeps the whole gradient as a partial sum: nothing is reduced per
// micro-batch; the weight update reduces the accumulated gradient once per
// step (one bucket per block).
#pragma once

#include <string>

#include "stg/graph/graph.h"

namespace stg::models {

// `expert_symbol` (megatron MoE): weights whose gradient is a partial sum
// over this symbol (the experts) get a flat buffer and bucket of their own.
void flatten_block_weights(graph::Graph& block, bool reduce_per_step = false,
                           const std::string& expert_symbol = "");

}  // namespace stg::models
