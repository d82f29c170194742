// Qwen3 mixture of experts (Qwen3MoeForCausalLM): Qwen3's attention (heads
// of head_dim, per-head q/k norms) and in every block a router over
// num_experts fine-grained gated experts of moe_intermediate_size, of which
// num_experts_per_tok are chosen per token; no shared expert.
#include <string>

#include "stg/models/families/expert_layout.h"
#include "stg/models/families/family.h"
#include "stg/models/families/qwen3_fields.h"

namespace stg::models {
namespace {

DecoderSpec decoder(const Options& o, int num_blocks) {
  DecoderSpec d = expert_layout(o, num_blocks, qwen3_block(false), qwen3_block(true));
  d.tied_embeddings = o.model_tied_embeddings.value_or(false);
  return d;
}

// mlp_only_layers: the blocks with a dense MLP; stg models the first k
// ([0, ..., k-1] is --dense_blocks k) and refuses other lists by name.
int64_t dense_prefix(const HfConfig& cfg) {
  std::string found;
  const nlohmann::json* v = cfg.lookup({"mlp_only_layers"}, found);
  if (!v) return 0;
  const std::string why =
      "field 'mlp_only_layers' must list the first blocks in order ([0, 1, ..., k-1]): stg "
      "models the first k blocks dense (--dense_blocks k), not others";
  if (!v->is_array()) cfg.fail(why);
  for (size_t i = 0; i < v->size(); ++i)
    if (!(*v)[i].is_number_integer() || (*v)[i].get<int64_t>() != static_cast<int64_t>(i))
      cfg.fail(why);
  return static_cast<int64_t>(v->size());
}

HfDims read_hf(const HfConfig& cfg) {
  HfDims d = read_qwen3_dims(cfg);
  d.row_flags["--experts"] = cfg.required_size({"num_experts"});
  d.row_flags["--kexperts"] = cfg.required_size({"num_experts_per_tok"});
  d.row_flags["--dff_expert"] = cfg.required_size({"moe_intermediate_size"});
  if (cfg.optional_size({"decoder_sparse_step"}).value_or(1) != 1)
    cfg.fail(
        "field 'decoder_sparse_step' is not 1: stg models MoE in every block after the first "
        "--dense_blocks, not in every n-th block");
  if (const int64_t k = dense_prefix(cfg); k > 0) d.dense_blocks = k;
  if (cfg.optional_size({"shared_expert_intermediate_size"}))
    d.notes.push_back(
        "shared_expert_intermediate_size is set: Qwen3-MoE has no shared expert and stg models "
        "none (use --shared_experts)");
  return d;
}

}  // namespace

const Family& qwen3_moe_family() {
  static const Family f = [] {
    Family f;
    f.name = "qwen3-moe";
    f.summary = "Qwen3's attention with fine-grained experts (Qwen3-MoE)";
    f.workload = decoder_workload;
    f.decoder = decoder;
    f.reads_kvhead = true;
    f.reads_experts = true;
    f.reads_tied_embeddings = true;
    f.hf_architectures = {"Qwen3MoeForCausalLM"};
    f.read_hf = read_hf;
    // Qwen3 technical report (2025) and Qwen/Qwen3-235B-A22B config.json:
    // 128 experts of 1536, 8 per token; dff is the config's
    // intermediate_size (dense blocks, none by default).
    Preset p{"qwen3-235b-a22b",
             "qwen3-moe",
             "Qwen3 235B-A22B, experts of 1536 (Qwen team 2025)",
             4096,
             12288,
             64,
             4,
             94,
             151936,
             128,
             8,
             4096};
    p.row_flags = {{"--head_dim", 128}, {"--dff_expert", 1536}};
    f.presets = {p};
    return f;
  }();
  return f;
}

}  // namespace stg::models
