// A decoder as data: its list of blocks, each a block kind built from parts
// (models/blocks/block_kinds.h), and what its family says about the ends.
// The decoder builder (models/decoder.h) turns it into a graph; the flag
// checks, the frameworks and the memory report read it instead of asking
// which family runs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace stg::models {

struct MixerRow;  // models/mixers/mixer_row.h

// Attention parts (models/parts/attention.h): multi-head, grouped-query
// (KVHead key/value heads shared by groups of query heads), or multi-head
// latent attention (DeepSeek-V2/V3, models/parts/mla.h: queries, keys and
// values from low-rank compressions of the input).
enum class AttentionKind { kMha, kGqa, kMla };
// The dense MLP part (models/parts/mlp.h): two matrices, or gated (up,
// gate, down; LLaMA's SwiGLU).
enum class MlpKind { kPlain, kGated };
// Block kinds (models/blocks/block_kinds.h): attention then a dense MLP,
// attention then a router and experts, or a multi-token prediction module
// (DeepSeek-V3 §2.2, blocks/mtp_module.h: the previous depth's hidden state
// and the next token's embedding, each normed, joined and projected, then
// a block of kind `mtp_block` and a final norm before the shared head).
enum class BlockKind { kDense, kMoe, kMtp };

struct BlockSpec {
  BlockKind kind = BlockKind::kDense;
  AttentionKind attention = AttentionKind::kMha;
  MlpKind mlp = MlpKind::kPlain;  // the dense MLP, or each expert's
  // Attention details (Qwen): heads of HeadDim (else Dmodel/Head), biases
  // on the Q, K and V projections (Qwen2), an RMSNorm over each head of Q
  // and K (Qwen3).
  bool own_head_dim = false;
  bool qkv_bias = false;
  bool qk_norm = false;
  // MoE blocks: experts of DffExpert (else Dff) wide; SharedExperts experts
  // that every token passes through besides its routed ones.
  bool own_expert_width = false;
  bool shared_experts = false;
  // kMtp: the kind of the module's transformer block (the other fields
  // describe its parts).
  BlockKind mtp_block = BlockKind::kDense;
  // A mixer of a component row in place of the attention above (null: the
  // attention part), with the row's options for this block (e.g. the
  // window); the attention fields still describe its projections.
  const MixerRow* mixer = nullptr;
  std::vector<int64_t> mixer_options = {};
  bool operator==(const BlockSpec&) const = default;
};

struct DecoderSpec {
  std::vector<BlockSpec> blocks;  // in order, first to last
  // Multi-token prediction modules (kind kMtp), depth 1 first, after the
  // output layer; they share the input embedding and the output layer.
  std::vector<BlockSpec> mtp;
  // GPT-3's dropout masks (the Megatron memory report counts them).
  bool dropout = false;
  // Megatron-LM's default for one weight shared by the input and output
  // embedding (--tie_embeddings).
  bool tied_embeddings = false;

  bool any(BlockKind k) const {
    return std::any_of(blocks.begin(), blocks.end(),
                       [&](const BlockSpec& b) { return b.kind == k; });
  }
  // Whether any block has the property `p` (e.g. &BlockSpec::qk_norm).
  bool any(bool BlockSpec::*p) const {
    return std::any_of(blocks.begin(), blocks.end(), [&](const BlockSpec& b) { return b.*p; });
  }
  bool any(AttentionKind a) const {
    return std::any_of(blocks.begin(), blocks.end(),
                       [&](const BlockSpec& b) { return b.attention == a; });
  }
};

}  // namespace stg::models
