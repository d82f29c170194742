// Multi-head latent attention as a mixer row (DeepSeek-V2/V3; the graph:
// models/parts/mla.h): the five dimensions it binds (DeepSeek-V3's by
// default), the notes for them when no block has it, its latent cache, and
// its activations for the Megatron-LM memory report. Its flags
// (--q_lora_rank, --kv_lora_rank, --qk_nope_head_dim, --qk_rope_head_dim,
// --v_head_dim) are the decoders' (options.h), which presets and Hugging
// Face configs fill.
#include "stg/models/mixers/mixer_row.h"
#include "stg/models/parts/mla.h"

namespace stg::models {

namespace {

extern const MixerRow kMla;

// The heads a cp head split divides: every head has its own K and V.
CpHeads cp_heads(const std::vector<int64_t>&, const std::map<std::string, int64_t>& v) {
  return {v.at("Head"), v.at("Head"), "--head", " heads"};
}

void dims(const std::vector<int64_t>&, const std::map<std::string, int64_t>&, const Options& o,
          std::vector<Dim>& out) {
  out.push_back({"QLoraRank", "--q_lora_rank", o.q_lora_rank, 1536});
  out.push_back({"KvLoraRank", "--kv_lora_rank", o.kv_lora_rank, 512});
  out.push_back({"QkNopeDim", "--qk_nope_head_dim", o.qk_nope_dim, 128});
  out.push_back({"QkRopeDim", "--qk_rope_head_dim", o.qk_rope_dim, 64});
  out.push_back({"VHeadDim", "--v_head_dim", o.v_head_dim, 128});
}

void note_unread(const DecoderSpec& d, const Options& o, const std::string& family,
                 std::vector<std::string>& notes) {
  if (!options_of(d, kMla).empty()) return;
  const std::pair<const std::optional<int64_t>&, const char*> flags[] = {
      {o.q_lora_rank, "--q_lora_rank"},
      {o.kv_lora_rank, "--kv_lora_rank"},
      {o.qk_nope_dim, "--qk_nope_head_dim"},
      {o.qk_rope_dim, "--qk_rope_head_dim"},
      {o.v_head_dim, "--v_head_dim"}};
  for (const auto& [given, flag] : flags)
    if (given) notes.push_back(std::string(flag) + " has no effect with --model_type " + family);
}

// A key of nope + rope dims and a value of its own width; every head's.
void cp_kv(const std::vector<int64_t>&, const std::map<std::string, int64_t>& v,
           report::AttentionKv& kv) {
  kv.k_dim = v.at("QkNopeDim") + v.at("QkRopeDim");
  kv.v_dim = v.at("VHeadDim");
  kv.kv_heads = v.at("Head") / v.at("tp");
}

// Its compressed latents (normed, whole on every tp rank) and its per-head
// Q, K, V of their own dims, 2 bytes each.
report::ActivationBytes activations(const std::vector<int64_t>&, const expr::Values& values,
                                    double s, double b) {
  auto value = [&](const char* symbol) { return report::bound_value(values, symbol, 1); };
  const double heads = value("Head");
  const double q_rank = value("QLoraRank"), kv_rank = value("KvLoraRank");
  const double nope = value("QkNopeDim"), rope = value("QkRopeDim");
  const double v_dim = value("VHeadDim");
  // The latents before and after their norms (the down projections'
  // outputs, the up projections' inputs), with the shared rotary key.
  const double latents = 2 * s * b * (2 * q_rank + (kv_rank + rope) + kv_rank);
  // Q and K of nope + rope dims, V and the attention output of v dims.
  const double attention = 2 * s * b * heads * (2 * (nope + rope) + 2 * v_dim);
  return {.split = attention, .whole = latents};
}

graph::Graph build(const Layout& l, const BlockSpec&, const PartChoices& choices,
                   const ContextParallel& cp, const KvCache& kv) {
  return latent_attention(l, choices, cp, kv);
}

const MixerRow kMla = {
    .name = "mla",
    .flags = {},
    .place = nullptr,  // the families' blocks
    .check = nullptr,
    .read_hf = nullptr,
    .activations = activations,
    .build = build,
    .serving = ServingState::kLatentCache,
    .dims = dims,
    .note_unread = note_unread,
    .cp_kv = cp_kv,
    .cp = {.heads = cp_heads},
};

}  // namespace

const MixerRow& mla_row() { return kMla; }

}  // namespace stg::models
