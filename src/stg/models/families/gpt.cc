// GPT (alias "dense"): every block multi-head attention and a two-matrix
// MLP; GPT-3's dropout; Megatron-LM ties its embeddings by default.
#include "stg/models/families/family.h"

namespace stg::models {
namespace {

DecoderSpec decoder(const Options&, int num_blocks) {
  DecoderSpec d;
  d.blocks.assign(num_blocks, BlockSpec{});
  d.dropout = true;
  d.tied_embeddings = true;
  return d;
}

HfDims read_hf(const HfConfig& cfg) { return read_decoder_dims(cfg, /*gpt_names=*/true); }

}  // namespace

const Family& gpt_family() {
  static const Family f = [] {
    Family f;
    f.name = "gpt";
    f.aliases = {"dense"};
    f.summary = "decoder-only, multi-head attention";
    f.workload = decoder_workload;
    f.decoder = decoder;
    f.hf_architectures = {"GPT2LMHeadModel", "GPTNeoXForCausalLM", "GPTJForCausalLM"};
    f.read_hf = read_hf;
    // Brown et al. 2020, "Language Models are Few-Shot Learners", table 2.1:
    // 96 layers, d_model 12288, 96 heads of 128, d_ff = 4 * d_model, context
    // 2048; the GPT-2 BPE vocabulary has 50257 tokens (odd: a --tp that does
    // not divide it is refused by the generator's whole-number check).
    f.presets = {{"gpt3-175b", "gpt", "GPT-3 175B (Brown et al. 2020)", 12288, 49152, 96, 96, 96,
                  50257, 0, 0, 2048}};
    return f;
  }();
  return f;
}

}  // namespace stg::models
