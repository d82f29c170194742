// The later reference's dense decoder-only model ("gpt", alias "dense"):
// vocabulary embedding, num_stacks x (norm, attention, residual, norm,
// FFN, residual), output embedding and loss; attention with a fused kernel.
// Every block's weights are flattened for FSDP (models/flat_weights.h). `tpsp`
// chooses Megatron tensor+sequence parallel layouts (activations sharded
// over tp outside attention and FFN) over tensor parallel only.
#pragma once

#include <string>

#include "stg/models/model.h"

namespace stg::models {

// What --framework megatron changes in the decoder models (docs/megatron.md);
// disabled: the reference generator's model.
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
  // MoE: the symbol of the expert-data-parallel degree, whose weights get
  // a gradient bucket of their own (models/moe.h); empty: none.
  std::string expert_data_symbol;
};

struct GptConfig {
  int num_stacks = 80;
  bool tpsp = true;
  // LLaMA: grouped-query attention (KVHead key/value heads) and a gated FFN
  // (up, gate, down) instead of multi-head attention and a two-matrix FFN.
  bool llama = false;
  MegatronParts megatron;
};

Model build_gpt(const GptConfig& config);

// The attention block (projections + fused kernel) and the FFN, shared with
// the MoE model.
graph::Graph gpt_attention(bool tpsp, bool grouped_query, const MegatronParts& megatron = {});
graph::Graph gpt_feed_forward(bool tpsp, bool gated);

// Where a decoder block plugs in its FFN module: the name prefix it is
// appended under, and its input, output, output-gradient and input-gradient
// tensors (full names).
struct FfnPorts {
  std::string prefix, x, y, dy, dx;
};

// A decoder block around the given attention and FFN modules: input norm,
// attention, residual, post-attention norm, FFN, residual; weights flattened
// for FSDP.
graph::Graph gpt_decoder_block(bool tpsp, const graph::Graph& attention_module,
                               const graph::Graph& ffn, const FfnPorts& ports,
                               const MegatronParts& megatron = {});
// num_stacks blocks between the vocabulary embedding and output embedding
// with loss; the axes of the later reference's models.
// With `megatron` enabled: Megatron-LM's vocabulary layers
// (models/megatron_embedding.h), tied or not.
Model assemble_decoder_model(const graph::Graph& block, int num_stacks, bool tpsp,
                             const MegatronParts& megatron = {});

}  // namespace stg::models
