// Qwen3 dense (Qwen3ForCausalLM): grouped-query attention with heads of
// head_dim (128, not hidden_size / num_attention_heads for Qwen3-32B), an
// RMSNorm over each head of Q and K, no QKV bias, gated MLP; tied
// embeddings as the config says.
#include "stg/models/families/family.h"
#include "stg/models/families/qwen3_fields.h"

namespace stg::models {
namespace {

DecoderSpec decoder(const Options& o, int num_blocks) {
  DecoderSpec d;
  d.blocks.assign(num_blocks, qwen3_block(false));
  d.tied_embeddings = o.model_tied_embeddings.value_or(false);
  return d;
}

}  // namespace

const Family& qwen3_family() {
  static const Family f = [] {
    Family f;
    f.name = "qwen3";
    f.summary = "grouped-query attention with per-head q/k norms and head_dim (Qwen3)";
    f.workload = decoder_workload;
    f.decoder = decoder;
    f.reads_kvhead = true;
    f.reads_tied_embeddings = true;
    f.hf_architectures = {"Qwen3ForCausalLM"};
    f.read_hf = read_qwen3_dims;
    // Qwen3 technical report (2025) and Qwen/Qwen3-32B config.json; seq is
    // the 4K context of the general pre-training stages.
    Preset p{"qwen3-32b", "qwen3", "Qwen3 32B, head_dim 128 (Qwen team 2025)",
             5120,        25600,   64,
             8,           64,      151936,
             0,           0,       4096};
    p.row_flags = {{"--head_dim", 128}};
    f.presets = {p};
    return f;
  }();
  return f;
}

}  // namespace stg::models
