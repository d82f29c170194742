// The mixture-of-experts part of a MoE block (the later reference's, or
// Megatron-LM's with --framework megatron): a router, Experts experts of
// which KExperts are chosen per token, split over `ep` (each rank holds
// Experts/ep expert MLPs); tokens are dispatched to and combined from them
// with ALL_TO_ALL over the ep group. Megatron-LM carves ep out of dp: its
// part is written with `edp` on the expert side, which the decoder binds
// (models/decoder.h). Shared experts (DeepSeek) run beside the routed ones
// on every token, split over tp like a dense MLP.
#pragma once

#include <string>

#include "stg/graph/graph.h"
#include "stg/models/blocks/block_spec.h"

namespace stg::models {

// Tensors: moe.x (input in the sequence-sharded layout), moe.dy (the
// output's gradient), and the output and input gradient that
// moe_ports(spec) names; every expert's under moe.<i>, the shared experts
// (BlockSpec::shared_experts: one gated MLP of SharedExperts x the expert
// width, on every token) under moe.shared. Each expert is an MLP of
// `spec.mlp`, of DffExpert (BlockSpec::own_expert_width) or Dff.
graph::Graph moe_ffn(const BlockSpec& spec, int experts_per_rank, bool ep_carved_from_dp);

// The output and the input gradient of moe_ffn's part.
struct MoePorts {
  std::string y, dx;
};
MoePorts moe_ports(const BlockSpec& spec);

}  // namespace stg::models
