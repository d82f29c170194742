// The later reference's mixture-of-experts model: the LLaMA decoder with its
// FFN replaced by a router and Experts experts, of which KExperts are chosen
// per token. Experts are split over `ep` (its own rank axis): each rank holds
// Experts/ep expert FFNs; tokens are dispatched to and combined from them
// with ALL_TO_ALL over the ep group.
#pragma once

#include "stg/models/gpt.h"
#include "stg/models/model.h"

namespace stg::models {

struct MoeConfig {
  int num_stacks = 80;
  int experts_per_rank = 4;  // Experts / ep
  MegatronParts megatron;
};

Model build_moe(const MoeConfig& config);

}  // namespace stg::models
