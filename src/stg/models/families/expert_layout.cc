#include "stg/models/families/expert_layout.h"

#include <string>

#include "stg/models/blocks/block_pattern.h"
#include "stg/models/parts/moe.h"
#include "stg/models/row_flag.h"

namespace stg::models {

DecoderSpec expert_layout(const Options& o, int num_blocks, const BlockSpec& dense, BlockSpec moe) {
  const int64_t first_dense = o.dense_blocks.value_or(0);
  if (first_dense < 0 || first_dense > num_blocks)
    throw UsageError("--dense_blocks " + std::to_string(first_dense) +
                     " is not valid: use 0 to --num_stacks " + std::to_string(num_blocks) +
                     " (the first blocks dense, the rest MoE)");
  ExpertOptions e = ExpertOptions::of(moe.mlp_options);
  // The experts row's flags (mlps/experts.cc).
  e.own_width = e.own_width || row_flag(o, "--dff_expert").has_value();
  e.shared = row_flag(o, "--shared_experts").value_or(0) > 0;
  moe.mlp_options = e.list();
  DecoderSpec d;
  d.blocks = BlockPattern{.first = first_dense}.blocks(static_cast<size_t>(num_blocks), dense, moe);
  return d;
}

}  // namespace stg::models
