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
struct MlpRow;    // models/mlps/mlp_row.h

// The row of the default block's mixer: multi-head attention
// (models/mixers/mha_attention.cc).
const MixerRow* default_mixer();
// The row of the default block's MLP: a dense MLP of two matrices
// (models/mlps/dense_mlp.cc).
const MlpRow* default_mlp();

// Block kinds (models/blocks/block_kinds.h): a block (its mixer, then its
// MLP: the frame of blocks/frame.h), or a multi-token prediction module
// (DeepSeek-V3 §2.2, blocks/mtp_module.h: the previous depth's hidden state
// and the next token's embedding, each normed, joined and projected, then
// the spec's block and a final norm before the shared head). kMoe is no
// kind of block: DecoderSpec::any(kMoe) asks whether a block's MLP row
// routes tokens to experts (kept for sweep/sweep.cc; any_experts() is the
// same).
enum class BlockKind { kBlock, kMtp, kMoe };

struct BlockSpec {
  BlockKind kind = BlockKind::kBlock;
  // The block's mixer (models/mixers/mixer_row.h: multi-head or latent
  // attention, a windowed attention, a Mamba-2 mixer), with the row's
  // options for this block (e.g. grouped-query heads, the window).
  const MixerRow* mixer = default_mixer();
  std::vector<int64_t> mixer_options = {};
  // The block's MLP (models/mlps/mlp_row.h: a dense MLP, routed experts;
  // null: none), with the row's options for this block (e.g. gated, shared
  // experts).
  const MlpRow* mlp = default_mlp();
  std::vector<int64_t> mlp_options = {};
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

  // Whether a block's MLP row routes tokens to experts (mlp_drivers.cc).
  bool any_experts() const;
  bool any(BlockKind k) const {
    if (k == BlockKind::kMoe) return any_experts();
    return std::any_of(blocks.begin(), blocks.end(),
                       [&](const BlockSpec& b) { return b.kind == k; });
  }
};

}  // namespace stg::models
