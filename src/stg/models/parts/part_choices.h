// The choices a framework makes for the decoder's parts
// (Framework::decoder_parts; --framework megatron's are in docs/megatron.md):
// each field is one choice a part reads, so no part asks which framework
// runs; all off: the reference generator's model.
#pragma once

#include <string>

namespace stg::models {

struct PartChoices {
  // Vocabulary-parallel layers (Megatron-LM's embedding and logits split
  // over tp by vocabulary rows, models/parts/vocab_parallel_embedding.h),
  // tied or not.
  bool vocab_parallel_layers = false;
  // The attention core (scores, softmax, P.V) is what selective
  // recomputation re-runs (Korthikanti et al.).
  bool selective_recompute_core = false;
  // MoE: Megatron-LM's layer, with ep carved out of dp (the experts' data
  // parallelism is dp, the tokens' dp x ep; models/parts/moe.h).
  bool experts_carved_from_dp = false;
  // The input and output embedding share one weight. Stages apart (pp > 1):
  // each end holds a copy, marked Tensor::tied.
  bool tie_embeddings = false;
  bool tied_stages_apart = false;
  // Attention charged for the causal half of the score matrix.
  bool causal_saving = false;
  // Grouped-query attention: the attention kernel gives dK and dV per KV
  // head (the query heads of a group summed inside it, as flash attention
  // and TransformerEngine's context-parallel attention do), so the
  // all-gather algorithm reduce-scatters the KV heads' gradients over cp.
  // Off (the reference's kernel): gradients of every query head, summed
  // down to the KV heads after the reduce-scatter.
  bool kv_head_gradients = false;
  // Weight gradients stay partial sums over the micro-batches and are reduced
  // once per step (ZeRO 0-2); otherwise per micro-batch (ZeRO 3).
  bool reduce_per_step = false;
  // Gradients are reduced over dp and cp together, one collective on the
  // dp x cp group, and the distributed optimizer shards over it
  // (Megatron-LM's data-parallel group with context parallelism).
  bool reduce_over_dp_cp = false;
  // MoE blocks: the symbol of the expert-data-parallel degree, whose weights
  // get a gradient bucket of their own (models/parts/moe.h); empty: none.
  std::string expert_data_symbol;
};

}  // namespace stg::models
