// Multi-head and grouped-query attention as a mixer row (the default
// block's mixer; models/parts/attention.h builds it): its options
// (AttentionOptions: KV heads, a head dimension of its own, QKV biases,
// per-head Q/K norms), the HeadDim it binds, its checks, its KV cache and
// its activations for the Megatron-LM memory report. Its flags: --kvhead
// (KVHead, a dimension of every decoder, row_flag.h) and --head_dim;
// presets and Hugging Face configs fill them.
#include "stg/models/families/registry.h"
#include "stg/models/mixers/mixer_row.h"
#include "stg/models/parts/attention.h"

namespace stg::models {

namespace {

constexpr const char* kKvHead = "--kvhead";
constexpr const char* kHeadDim = "--head_dim";

extern const MixerRow kMha;

void check(const std::vector<int64_t>& options, const std::map<std::string, int64_t>& v,
           const Options&, const mesh::Degrees& degree) {
  const AttentionOptions a = AttentionOptions::of(options);
  const int64_t tp = degree["tp"];
  if (!a.own_head_dim)
    require(v.at("Dmodel") % v.at("Head") == 0,
            "--dmodel " + num(v.at("Dmodel")) + " is not divisible by --head " + num(v.at("Head")) +
                ": every attention head needs a whole head dimension (--dmodel / --head)");
  if (a.grouped) {
    require(v.at("Head") % v.at("KVHead") == 0, "--kvhead " + num(v.at("KVHead")) +
                                                    " does not divide --head " + num(v.at("Head")) +
                                                    ": query heads are shared by whole groups");
    require(v.at("KVHead") % tp == 0, "--kvhead " + num(v.at("KVHead")) +
                                          " is not divisible by --tp " + num(tp) +
                                          ": every tensor-parallel rank needs whole KV heads");
  }
}

// The heads a cp head split divides: the KV heads under GQA.
CpHeads cp_heads(const std::vector<int64_t>& options, const std::map<std::string, int64_t>& v) {
  const bool grouped = AttentionOptions::of(options).grouped;
  return {grouped ? v.at("KVHead") : v.at("Head"), v.at("Head"), grouped ? "--kvhead" : "--head",
          grouped ? " KV heads" : " heads"};
}

void dims(const std::vector<int64_t>& options, const std::map<std::string, int64_t>& v,
          const Options& o, std::vector<Dim>& out) {
  if (AttentionOptions::of(options).own_head_dim)
    out.push_back({"HeadDim", kHeadDim, row_flag(o, kHeadDim), v.at("Dmodel") / v.at("Head")});
}

bool any(const DecoderSpec& d, bool AttentionOptions::*p) {
  for (const std::vector<int64_t>& options : options_of(d, kMha))
    if (AttentionOptions::of(options).*p) return true;
  return false;
}

void note_unread(const DecoderSpec& d, const Options& o, const std::string& family,
                 std::vector<std::string>& notes) {
  if (row_flag(o, kHeadDim) && !any(d, &AttentionOptions::own_head_dim))
    notes.push_back("--head_dim has no effect with --model_type " + family);
}

// The families place the row; its --kvhead is unread without grouped heads.
void place(DecoderSpec& d, const std::map<std::string, int64_t>&, const Options& o,
           std::vector<std::string>& notes) {
  if (row_flag(o, kKvHead) && !any(d, &AttentionOptions::grouped))
    notes.push_back(
        "--kvhead (grouped-query attention is --model_type llama) has no effect with "
        "--model_type " +
        family_of(o).name);
}

// Per-head widths of a key and a value (Dmodel/Head or HeadDim), KV heads
// per tp rank.
void cp_kv(const std::vector<int64_t>& options, const std::map<std::string, int64_t>& v,
           report::AttentionKv& kv) {
  const AttentionOptions a = AttentionOptions::of(options);
  kv.k_dim = kv.v_dim = v.count("HeadDim") ? v.at("HeadDim") : v.at("Dmodel") / v.at("Head");
  kv.kv_heads = (a.grouped ? v.at("KVHead") : v.at("Head")) / v.at("tp");
}

double value(const expr::Values& values, const char* symbol) {
  return report::bound_value(values, symbol, 1);
}

// Korthikanti et al. §4.1: Q, K and V (K and V of KVHead heads), and the
// attention output (the projection's input), 2 bytes each; with heads of
// their own width or per-head norms, of Head x HeadDim (and the norms'
// inputs).
report::ActivationBytes activations(const std::vector<int64_t>& options, const expr::Values& values,
                                    double s, double b) {
  const AttentionOptions a = AttentionOptions::of(options);
  const double h = value(values, "Dmodel");
  const double sbh = s * b * h;
  const double kv = a.grouped ? value(values, "KVHead") / value(values, "Head") : 1;
  double attention = 2 * sbh         // Q
                     + 4 * sbh * kv  // K and V
                     + 2 * sbh;      // the attention output (the projection's input)
  if (a.own_head_dim || a.qk_norm) {
    const double heads = value(values, "Head");
    const double head_dim = a.own_head_dim ? value(values, "HeadDim") : h / heads;
    const double q_width = heads * head_dim;
    const double kv_width = (a.grouped ? value(values, "KVHead") : heads) * head_dim;
    attention = s * b * (2 * q_width + 4 * kv_width + 2 * q_width);
    if (a.qk_norm) attention += s * b * (2 * q_width + 2 * kv_width);  // the norms' inputs
  }
  return {.split = attention};
}

graph::Graph build(const Layout& l, const BlockSpec& spec, const PartChoices& choices,
                   const ContextParallel& cp, const KvCache& kv) {
  return attention(l, AttentionOptions::of(spec.mixer_options), choices, cp, kv);
}

const MixerRow kMha = {
    .name = "mha",
    .slot = "mha",
    .flags = {{.flag = kKvHead,
               .help = "key/value heads (llama, moe)",
               .fallback = "refused / 8",
               .least = 1,
               .command_line_least = false,
               .listed_after = "--head",
               .decoders_only = false,
               .symbol = "KVHead",
               .decoder_default = 8},
              {.flag = kHeadDim,
               .help = "per-head width of attention (qwen3, qwen3-moe; default --dmodel / --head)",
               .fallback = "refused / --dmodel / --head",
               .least = 1,
               .command_line_least = false,
               .listed_after = "--kexperts",
               .decoders_only = false}},
    .place = place,
    .check = check,
    .read_hf = nullptr,
    .activations = activations,
    .build = build,
    .serving = ServingState::kKvCache,
    .dims = dims,
    .note_unread = note_unread,
    .cp_kv = cp_kv,
    .cp = {.heads = cp_heads},
};

}  // namespace

const MixerRow& mha_row() { return kMha; }

}  // namespace stg::models
