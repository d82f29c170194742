// The blocks of a mixture-of-experts decoder from the flags: the first
// --dense_blocks blocks dense, the rest MoE, whose experts are --dff_expert
// wide (when given) with --shared_experts shared experts (when > 0). The
// MoE families (moe, qwen3-moe, deepseek) make their decoders with it.
#pragma once

#include "stg/models/blocks/block_spec.h"
#include "stg/options.h"

namespace stg::models {

// `dense`: the spec of a dense block, `moe`: of a MoE block (before the
// flags). UsageError when --dense_blocks exceeds the blocks.
DecoderSpec expert_layout(const Options& o, int num_blocks, const BlockSpec& dense, BlockSpec moe);

}  // namespace stg::models
