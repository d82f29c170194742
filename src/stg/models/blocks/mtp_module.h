// A multi-token prediction module (DeepSeek-V3 technical report §2.2), the
// block kind kMtp: depth k predicts the token k + 1 positions ahead from
// the previous depth's hidden state (the last block's for depth 1) and the
// embedding of the token k positions ahead. Each is normed, the two are
// joined (2 x Dmodel) and projected back to Dmodel by `eh_proj`
// [2 Dmodel, Dmodel], then one block of the spec's mixer and MLP and a
// final norm feed the output layer. The embedding and the
// output layer are the model's (models/parts/mtp_vocabulary.h), not the
// module's. `eh_proj` is split by its output columns over tp (as
// Megatron-LM's); norms hold no weights, as elsewhere in stg.
#pragma once

#include "stg/graph/graph.h"
#include "stg/models/blocks/block_kinds.h"

namespace stg::models {

// The module's tensors the decoder links to (names inside the module).
struct MtpPorts {
  static constexpr const char* hidden = "hnorm.x";      // the previous depth's hidden state
  static constexpr const char* dhidden = "hnorm.dx";    // its gradient
  static constexpr const char* embedded = "enorm.x";    // the shifted tokens' embedding
  static constexpr const char* dembedded = "enorm.dx";  // its gradient
  // The block's output (the next depth's hidden state) and the gradient
  // that reaches it (from the final norm; the decoder adds the next
  // depth's).
  static constexpr const char* out = "block.ffn_res.y";
  static constexpr const char* dout = "block.ffn_res.dy";
  static constexpr const char* dout_from_head = "final_norm.dx";
  // The output layer's input and the gradient it returns.
  static constexpr const char* head_input = "final_norm.y";
  static constexpr const char* dhead_input = "final_norm.dy";
};

}  // namespace stg::models
