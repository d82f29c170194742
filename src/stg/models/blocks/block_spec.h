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

// The row of the default block's mixer: multi-head attention
// (models/mixers/mha_attention.cc).
const MixerRow* default_mixer();

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
  MlpKind mlp = MlpKind::kPlain;  // the dense MLP, or each expert's
  // MoE blocks: experts of DffExpert (else Dff) wide; SharedExperts experts
  // that every token passes through besides its routed ones.
  bool own_expert_width = false;
  bool shared_experts = false;
  // kMtp: the kind of the module's transformer block (the other fields
  // describe its parts).
  BlockKind mtp_block = BlockKind::kDense;
  // The block's mixer (models/mixers/mixer_row.h: multi-head or latent
  // attention, a windowed attention, a Mamba-2 mixer), with the row's
  // options for this block (e.g. grouped-query heads, the window).
  const MixerRow* mixer = default_mixer();
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
};

}  // namespace stg::models
