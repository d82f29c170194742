// Mixture of experts (Mixtral): grouped-query attention and a router with
// Experts experts, KExperts chosen per token, in every block.
#include "stg/models/families/expert_layout.h"
#include "stg/models/families/family.h"
#include "stg/models/mlps/mlp_row.h"
#include "stg/models/parts/attention.h"

namespace stg::models {
namespace {

DecoderSpec decoder(const Options& o, int num_blocks) {
  // The later reference's experts are two-matrix MLPs; --dense_blocks,
  // --dff_expert and --shared_experts as the flags say (none by default).
  BlockSpec dense, moe;
  dense.mlp_options = {1};  // gated
  moe.mlp = &experts_row();
  dense.mixer_options = moe.mixer_options = AttentionOptions{.grouped = true}.list();
  return expert_layout(o, num_blocks, dense, moe);
}

HfDims read_hf(const HfConfig& cfg) {
  HfDims d = read_decoder_dims(cfg, /*gpt_names=*/false);
  d.row_flags["--kvhead"] = cfg.optional_size({"num_key_value_heads"}).value_or(d.heads);
  d.row_flags["--experts"] = cfg.required_size({"num_local_experts"});
  d.row_flags["--kexperts"] = cfg.required_size({"num_experts_per_tok"});
  return d;
}

}  // namespace

const Family& moe_family() {
  static const Family f = [] {
    Family f;
    f.name = "moe";
    f.summary = "llama with a mixture-of-experts FFN";
    f.workload = decoder_workload;
    f.decoder = decoder;
    f.reads_kvhead = true;
    f.reads_experts = true;
    f.hf_architectures = {"MixtralForCausalLM"};
    f.read_hf = read_hf;
    // Jiang et al. 2024, "Mixtral of Experts"; mistralai/Mixtral-* config.json.
    f.presets = {
        {"mixtral-8x7b", "moe", "Mixtral 8x7B (Jiang et al. 2024)", 4096, 14336, 32, 8, 32, 32000,
         8, 2, 32768},
        {"mixtral-8x22b", "moe", "Mixtral 8x22B (Mistral AI 2024)", 6144, 16384, 48, 8, 56, 32768,
         8, 2, 65536},
    };
    return f;
  }();
  return f;
}

}  // namespace stg::models
