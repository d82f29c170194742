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
  // LLaMA: grouped-query attention (KVHead key/value heads) and a gated FFN
  // (up, gate, down) instead of multi-head attention and a two-matrix FFN.
  bool llama = false;
};

Model build_gpt(const GptConfig& config);

// The attention block (projections + fused kernel) and the FFN, shared with
// the MoE model.
graph::Graph gpt_attention(bool tpsp, bool grouped_query);
graph::Graph gpt_layer_norm(bool tpsp);
graph::Graph gpt_residual(bool tpsp);
graph::Graph gpt_embedding(bool tpsp);
graph::Graph gpt_loss(bool tpsp);
graph::Graph gpt_feed_forward(bool tpsp, bool gated);

}  // namespace stg::models
