// DeepSeek-V3 (DeepseekV3ForCausalLM; DeepSeek-V3 technical report, 2024):
// multi-head latent attention in every block (models/parts/mla.h); the
// first --dense_blocks blocks with a dense gated MLP, the rest a router over
// fine-grained gated experts of --dff_expert, --kexperts chosen per token,
// plus --shared_experts experts that every token passes through; untied
// embeddings; --mtp_depth multi-token prediction modules (num_nextn_predict_layers).
#include <string>

#include "stg/models/families/expert_layout.h"
#include "stg/models/families/family.h"
#include "stg/models/mixers/mixer_row.h"
#include "stg/models/mlps/mlp_row.h"

namespace stg::models {
namespace {

DecoderSpec decoder(const Options& o, int num_blocks) {
  BlockSpec dense, moe;
  moe.mlp = &experts_row();
  dense.mlp_options = moe.mlp_options = {1};  // gated
  dense.mixer = moe.mixer = &mla_row();
  DecoderSpec d = expert_layout(o, num_blocks, dense, moe);
  d.tied_embeddings = o.model_tied_embeddings.value_or(false);
  return d;
}

HfDims read_hf(const HfConfig& cfg) {
  HfDims d = read_decoder_dims(cfg, /*gpt_names=*/false);
  d.row_flags["--experts"] = cfg.required_size({"n_routed_experts"});
  d.row_flags["--kexperts"] = cfg.required_size({"num_experts_per_tok"});
  d.row_flags["--dff_expert"] = cfg.required_size({"moe_intermediate_size"});
  if (const std::optional<int64_t> shared = cfg.optional_size({"n_shared_experts"}))
    d.row_flags["--shared_experts"] = *shared;
  d.dense_blocks = cfg.optional_size({"first_k_dense_replace"});
  if (cfg.optional_size({"moe_layer_freq"}).value_or(1) != 1)
    cfg.fail(
        "field 'moe_layer_freq' is not 1: stg models MoE in every block after the first "
        "--dense_blocks, not in every n-th block");
  // DeepSeek-V2-Lite's q_lora_rank null (queries not compressed) is not modelled.
  std::string found;
  if (!cfg.lookup({"q_lora_rank"}, found))
    cfg.fail(
        "field 'q_lora_rank' is missing or null: stg models multi-head latent attention with "
        "compressed queries only");
  // The MLA row's flags (mixers/mla_attention.cc).
  const std::pair<const char*, const char*> mla[] = {{"q_lora_rank", "--q_lora_rank"},
                                                     {"kv_lora_rank", "--kv_lora_rank"},
                                                     {"qk_nope_head_dim", "--qk_nope_head_dim"},
                                                     {"qk_rope_head_dim", "--qk_rope_head_dim"},
                                                     {"v_head_dim", "--v_head_dim"}};
  for (const auto& [field, flag] : mla) d.row_flags[flag] = cfg.required_size({field});
  d.mtp_depth = cfg.optional_count({"num_nextn_predict_layers"});
  d.tied_embeddings = read_tied_embeddings(cfg, false);
  // Multi-head latent attention caches the latent, not K/V heads: the
  // config's num_key_value_heads (= heads) describes no tensor.
  cfg.ignore({"num_key_value_heads"});
  return d;
}

}  // namespace

const Family& deepseek_family() {
  static const Family f = [] {
    Family f;
    f.name = "deepseek";
    f.summary = "multi-head latent attention, shared and fine-grained experts (DeepSeek-V3)";
    f.workload = decoder_workload;
    f.decoder = decoder;
    f.reads_experts = true;
    f.reads_tied_embeddings = true;
    f.hf_architectures = {"DeepseekV3ForCausalLM"};
    f.read_hf = read_hf;
    // DeepSeek-V3 technical report (2024) §2, §4.2 and deepseek-ai/DeepSeek-V3
    // config.json: 61 blocks, the first 3 dense (FFN 18432), then 256 routed
    // experts of 2048 (8 per token) and 1 shared; 128 heads of MLA with
    // q_lora_rank 1536, kv_lora_rank 512, nope 128 + rope 64, v 128; seq is
    // the 4K pre-training context. kvhead is not used by MLA (128 = heads).
    Preset p{"deepseek-v3",
             "deepseek",
             "DeepSeek-V3 671B-A37B: MLA, 3 dense blocks, experts of 2048 + 1 shared, MTP depth 1 "
             "(DeepSeek-AI 2024)",
             7168,
             18432,
             128,
             128,
             61,
             129280,
             256,
             8,
             4096};
    p.dense_blocks = 3;
    p.row_flags = {{"--dff_expert", 2048},  {"--shared_experts", 1},     {"--q_lora_rank", 1536},
                   {"--kv_lora_rank", 512}, {"--qk_nope_head_dim", 128}, {"--qk_rope_head_dim", 64},
                   {"--v_head_dim", 128}};
    p.mtp_depth = 1;  // §2.2: one MTP module in training
    f.presets = {p};
    return f;
  }();
  return f;
}

}  // namespace stg::models
