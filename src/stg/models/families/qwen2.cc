// Qwen2 and Qwen2.5 (Qwen2ForCausalLM): llama's blocks (grouped-query
// attention, gated MLP) with biases on the Q, K and V projections; heads of
// hidden_size / num_attention_heads; tied embeddings as the config says
// (the small models tie them, 7B and up do not).
#include "stg/models/families/family.h"
#include "stg/models/parts/attention.h"

namespace stg::models {
namespace {

DecoderSpec decoder(const Options& o, int num_blocks) {
  BlockSpec block;
  block.mlp_options = {1};  // gated
  block.mixer_options = AttentionOptions{.grouped = true, .qkv_bias = true}.list();
  DecoderSpec d;
  d.blocks.assign(num_blocks, block);
  d.tied_embeddings = o.model_tied_embeddings.value_or(false);
  return d;
}

HfDims read_hf(const HfConfig& cfg) {
  HfDims d = read_decoder_dims(cfg, /*gpt_names=*/false);
  d.row_flags["--kvhead"] = cfg.optional_size({"num_key_value_heads"}).value_or(d.heads);
  d.tied_embeddings = read_tied_embeddings(cfg, false);
  if (optional_bool(cfg, "use_sliding_window", false))
    d.notes.push_back(
        "use_sliding_window is true: stg models full attention over the sequence in every "
        "block");
  // The window's size and layers matter only with use_sliding_window (noted).
  cfg.ignore({"sliding_window", "max_window_layers"});
  return d;
}

}  // namespace

const Family& qwen2_family() {
  static const Family f = [] {
    Family f;
    f.name = "qwen2";
    f.summary = "llama with biases on Q, K and V (Qwen2, Qwen2.5)";
    f.workload = decoder_workload;
    f.decoder = decoder;
    f.reads_kvhead = true;
    f.reads_tied_embeddings = true;
    f.hf_architectures = {"Qwen2ForCausalLM"};
    f.read_hf = read_hf;
    // Qwen2.5 technical report (2024) and Qwen/Qwen2.5-72B config.json;
    // seq is the 4K context of the main pre-training stage.
    Preset p{"qwen2.5-72b",
             "qwen2",
             "Qwen2.5 72B, QKV bias (Qwen team 2024)",
             8192,
             29568,
             64,
             8,
             80,
             152064,
             0,
             0,
             4096};
    f.presets = {p};
    return f;
  }();
  return f;
}

}  // namespace stg::models
