#include "stg/models/families/expert_layout.h"

#include <string>

#include "stg/models/blocks/block_pattern.h"
#include "stg/models/mlps/mlp_row.h"

namespace stg::models {

DecoderSpec expert_layout(const Options& o, int num_blocks, const BlockSpec& dense, BlockSpec moe) {
  const int64_t first_dense = o.dense_blocks.value_or(0);
  if (first_dense < 0 || first_dense > num_blocks)
    throw UsageError("--dense_blocks " + std::to_string(first_dense) +
                     " is not valid: use 0 to --num_stacks " + std::to_string(num_blocks) +
                     " (the first blocks dense, the rest MoE)");
  // The experts row's options as its flags set them (mlps/experts.cc).
  if (moe.mlp && moe.mlp->flagged_options)
    moe.mlp_options = moe.mlp->flagged_options(moe.mlp_options, o);
  DecoderSpec d;
  d.blocks = BlockPattern{.first = first_dense}.blocks(static_cast<size_t>(num_blocks), dense, moe);
  return d;
}

}  // namespace stg::models
