// What the Qwen3 families (qwen3, qwen3-moe) share: their blocks'
// attention and the fields of their configs.
#pragma once

#include "stg/models/blocks/block_spec.h"
#include "stg/models/hf_fields.h"

namespace stg::models {

// A Qwen3 block of `kind`: grouped-query attention with heads of HeadDim
// and per-head q/k RMSNorm, gated MLP (or gated experts).
BlockSpec qwen3_block(bool experts);

// hidden_size, intermediate_size, num_attention_heads, num_key_value_heads,
// head_dim (absent: 128, the configuration class's default), num_hidden_layers,
// vocab_size, max_position_embeddings, tie_word_embeddings; notes for
// attention_bias and use_sliding_window when true.
HfDims read_qwen3_dims(const HfConfig& cfg);

}  // namespace stg::models
