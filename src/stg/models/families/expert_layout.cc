#include "stg/models/families/expert_layout.h"

#include <string>

#include "stg/models/blocks/block_pattern.h"

namespace stg::models {

DecoderSpec expert_layout(const Options& o, int num_blocks, const BlockSpec& dense, BlockSpec moe) {
  const int64_t first_dense = o.dense_blocks.value_or(0);
  if (first_dense < 0 || first_dense > num_blocks)
    throw UsageError("--dense_blocks " + std::to_string(first_dense) +
                     " is not valid: use 0 to --num_stacks " + std::to_string(num_blocks) +
                     " (the first blocks dense, the rest MoE)");
  moe.own_expert_width = moe.own_expert_width || o.dff_expert.has_value();
  moe.shared_experts = o.shared_experts.value_or(0) > 0;
  DecoderSpec d;
  d.blocks = BlockPattern{.first = first_dense}.blocks(static_cast<size_t>(num_blocks), dense, moe);
  return d;
}

}  // namespace stg::models
