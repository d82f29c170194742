// LLaMA (and Mistral): grouped-query attention and a gated MLP in every
// block; untied embeddings.
#include "stg/models/families/family.h"
#include "stg/models/parts/attention.h"

namespace stg::models {
namespace {

DecoderSpec decoder(const Options&, int num_blocks) {
  DecoderSpec d;
  BlockSpec block;
  block.mlp_options = {1};  // gated
  block.mixer_options = AttentionOptions{.grouped = true}.list();
  d.blocks.assign(num_blocks, block);
  return d;
}

HfDims read_hf(const HfConfig& cfg) {
  HfDims d = read_decoder_dims(cfg, /*gpt_names=*/false);
  d.row_flags["--kvhead"] = cfg.optional_size({"num_key_value_heads"}).value_or(d.heads);
  return d;
}

}  // namespace

const Family& llama_family() {
  static const Family f = [] {
    Family f;
    f.name = "llama";
    f.summary = "grouped-query attention, gated FFN";
    f.workload = decoder_workload;
    f.decoder = decoder;
    f.reads_kvhead = true;
    f.hf_architectures = {"LlamaForCausalLM", "MistralForCausalLM"};
    f.read_hf = read_hf;
    // Touvron et al. 2023, "Llama 2"; meta-llama/Llama-2-*-hf config.json.
    // Meta Llama 3 model cards and "The Llama 3 Herd of Models" (2024); seq
    // is the 8K pre-training context (the 3.1 releases extend it to 128K).
    f.presets = {
        {"llama2-7b", "llama", "Llama 2 7B (Touvron et al. 2023)", 4096, 11008, 32, 32, 32, 32000,
         0, 0, 4096},
        {"llama2-70b", "llama", "Llama 2 70B (Touvron et al. 2023)", 8192, 28672, 64, 8, 80, 32000,
         0, 0, 4096},
        {"llama3-8b", "llama", "Llama 3 8B (Meta 2024)", 4096, 14336, 32, 8, 32, 128256, 0, 0,
         8192},
        {"llama3-70b", "llama", "Llama 3 70B (Meta 2024)", 8192, 28672, 64, 8, 80, 128256, 0, 0,
         8192},
        {"llama3-405b", "llama", "Llama 3.1 405B (Llama 3 Herd of Models 2024)", 16384, 53248, 128,
         8, 126, 128256, 0, 0, 8192},
    };
    return f;
  }();
  return f;
}

}  // namespace stg::models
