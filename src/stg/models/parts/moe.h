// The mixture-of-experts part of a MoE block (the later reference's, or
// Megatron-LM's with --framework megatron): a router, Experts experts of
// which KExperts are chosen per token, split over `ep` (each rank holds
// Experts/ep expert MLPs); tokens are dispatched to and combined from them
// with ALL_TO_ALL over the ep group. Megatron-LM carves ep out of dp: its
// part is written with `edp` on the expert side, which the decoder binds
// (models/decoder.h).
#pragma once

#include "stg/graph/graph.h"

namespace stg::models {

// Tensors: moe.x, moe.y (input and output in the sequence-sharded layout),
// moe.dy, moe.dx; every expert's under moe.<i>.
graph::Graph moe_ffn(int experts_per_rank, bool megatron);

}  // namespace stg::models
