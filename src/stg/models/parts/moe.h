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
#include <vector>


namespace stg::models {

// The experts' options (their row's, a block's mlp_options:
// models/mlps/experts.cc): gated experts (SwiGLU, else two matrices), of
// DffExpert wide (else Dff), SharedExperts shared experts beside the routed.
struct ExpertOptions {
  bool gated = false, own_width = false, shared = false;
  // From a block's options (empty: all false), and back.
  static ExpertOptions of(const std::vector<int64_t>& options);
  std::vector<int64_t> list() const;
};

// Tensors: moe.x (input in the sequence-sharded layout), moe.dy (the
// output's gradient), and the output and input gradient that
// moe_ports(spec) names; every expert's under moe.<i>, the shared experts
// (ExpertOptions::shared: one gated MLP of SharedExperts x the expert
// width, on every token) under moe.shared. Each expert is an MLP, gated or
// not, of DffExpert (ExpertOptions::own_width) or Dff.
graph::Graph moe_ffn(const ExpertOptions& e, int experts_per_rank, bool ep_carved_from_dp);

// The output and the input gradient of moe_ffn's part.
struct MoePorts {
  std::string y, dx;
};
MoePorts moe_ports(const ExpertOptions& e);

}  // namespace stg::models
