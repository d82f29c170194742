#include "stg/models/families/qwen3_fields.h"

#include "stg/models/mlps/mlp_row.h"
#include "stg/models/parts/attention.h"

namespace stg::models {

BlockSpec qwen3_block(bool experts) {
  BlockSpec b;
  b.mlp = experts ? &experts_row() : &dense_mlp_row();
  b.mlp_options = {1};  // gated
  b.mixer_options = AttentionOptions{.grouped = true, .own_head_dim = true, .qk_norm = true}.list();
  return b;
}

HfDims read_qwen3_dims(const HfConfig& cfg) {
  HfDims d = read_decoder_dims(cfg, /*gpt_names=*/false);
  d.row_flags["--kvhead"] = cfg.optional_size({"num_key_value_heads"}).value_or(d.heads);
  // Absent: the Qwen3 configuration class's default, 128.
  d.row_flags["--head_dim"] = cfg.optional_size({"head_dim"}).value_or(128);
  d.tied_embeddings = read_tied_embeddings(cfg, false);
  if (optional_bool(cfg, "attention_bias", false))
    d.notes.push_back(
        "attention_bias is true: stg models the Q, K, V and output projections without biases");
  if (optional_bool(cfg, "use_sliding_window", false))
    d.notes.push_back(
        "use_sliding_window is true: stg models full attention over the sequence in every "
        "block");
  // The window's size and layers matter only with use_sliding_window (noted).
  cfg.ignore({"sliding_window", "max_window_layers"});
  return d;
}

}  // namespace stg::models
