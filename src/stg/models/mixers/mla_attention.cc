// Multi-head latent attention as a mixer row (DeepSeek-V2/V3; the graph:
// models/parts/mla.h): the five dimensions it binds (DeepSeek-V3's by
// default), the notes for them when no block has it, its latent cache, and
// its activations for the Megatron-LM memory report. Its flags, one per
// dimension, are its own; presets and Hugging Face configs fill them.
#include "stg/models/mixers/mixer_row.h"
#include "stg/models/parts/mla.h"

namespace stg::models {

namespace {

extern const MixerRow kMla;

// The heads a cp head split divides: every head has its own K and V.
CpHeads cp_heads(const std::vector<int64_t>&, const std::map<std::string, int64_t>& v) {
  return {v.at("Head"), v.at("Head"), "--head", " heads"};
}

// Each dimension: its symbol, flag, --help text and default (DeepSeek-V3's).
struct MlaDim {
  const char* symbol;
  RowFlag flag;
  int64_t fallback;
};

RowFlag dim_flag(const char* flag, const char* help, const char* fallback, const char* after) {
  return {.flag = flag,
          .help = help,
          .fallback = fallback,
          .least = 1,
          .command_line_least = false,
          .listed_after = after,
          .decoders_only = false};
}

const std::vector<MlaDim>& mla_dims() {
  static const std::vector<MlaDim> all = {
      {"QLoraRank",
       dim_flag("--q_lora_rank", "MLA query compression rank (deepseek)", "refused / 1536",
                "--dense_blocks"),
       1536},
      {"KvLoraRank",
       dim_flag("--kv_lora_rank", "MLA key-value compression rank (deepseek)", "refused / 512",
                "--q_lora_rank"),
       512},
      {"QkNopeDim",
       dim_flag("--qk_nope_head_dim",
                "MLA per-head query/key dims without rotary embedding (deepseek)", "refused / 128",
                "--kv_lora_rank"),
       128},
      {"QkRopeDim",
       dim_flag("--qk_rope_head_dim",
                "MLA per-head query/key dims with rotary embedding, the key's shared by all "
                "heads (deepseek)",
                "refused / 64", "--qk_nope_head_dim"),
       64},
      {"VHeadDim",
       dim_flag("--v_head_dim", "MLA per-head value dims (deepseek)", "refused / 128",
                "--qk_rope_head_dim"),
       128}};
  return all;
}

std::vector<RowFlag> flags() {
  std::vector<RowFlag> out;
  for (const MlaDim& m : mla_dims()) out.push_back(m.flag);
  return out;
}

void dims(const std::vector<int64_t>&, const std::map<std::string, int64_t>&, const Options& o,
          std::vector<Dim>& out) {
  for (const MlaDim& m : mla_dims())
    out.push_back({m.symbol, m.flag.flag, row_flag(o, m.flag.flag), m.fallback});
}

void note_unread(const DecoderSpec& d, const Options& o, const std::string& family,
                 std::vector<std::string>& notes) {
  if (!options_of(d, kMla).empty()) return;
  for (const MlaDim& m : mla_dims())
    if (row_flag(o, m.flag.flag))
      notes.push_back(std::string(m.flag.flag) + " has no effect with --model_type " + family);
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
    .slot = "mha",
    .flags = flags(),
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
