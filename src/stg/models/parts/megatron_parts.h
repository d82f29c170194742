// What --framework megatron changes in the decoder's parts
// (docs/megatron.md), as the framework says (Framework::decoder_parts);
// disabled: the reference generator's model.
#pragma once

#include <string>

namespace stg::models {

struct MegatronParts {
  bool enabled = false;
  // The input and output embedding share one weight. Stages apart (pp > 1):
  // each end holds a copy, marked Tensor::tied.
  bool tie_embeddings = false;
  bool tied_stages_apart = false;
  // Attention charged for the causal half of the score matrix.
  bool causal_saving = false;
  // Weight gradients stay partial sums over the micro-batches and are reduced
  // once per step (ZeRO 0-2); otherwise per micro-batch (ZeRO 3).
  bool reduce_per_step = false;
  // MoE blocks: the symbol of the expert-data-parallel degree, whose weights
  // get a gradient bucket of their own (models/parts/moe.h); empty: none.
  std::string expert_data_symbol;
};

}  // namespace stg::models
