// The later reference's dense decoder-only model ("gpt", alias "dense"):
// vocabulary embedding, num_stacks x (norm, attention, residual, norm,
// FFN, residual), output embedding and loss; attention with a fused kernel.
// Every block's weights are flattened for FSDP (passes/fsdp.h). `tpsp`
// chooses Megatron tensor+sequence parallel layouts (activations sharded
// over tp outside attention and FFN) over tensor parallel only.
#pragma once

#include "stg/models/model.h"

namespace stg::models {

struct GptConfig {
  int num_stacks = 80;
  bool tpsp = true;
};

Model build_gpt(const GptConfig& config);

}  // namespace stg::models
