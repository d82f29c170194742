// Sliding-window attention (Mistral 7B, Gemma 2 and 3; docs/models_2025.md
// "Sliding-window attention"): each query attends over the last --window
// tokens, its own included, instead of every token before it. Mistral's
// blocks are all local; Gemma's alternate local and global blocks
// (--global_every N: every N-th block keeps global attention; Gemma 2: 2,
// Gemma 3: 6).
//
// What the window bounds, from the definition (Beltagy et al. 2020, Jiang et
// al. 2023): a query at position i scores keys max(0, i-W+1)..i, so a
// sequence of S >= W tokens has W*S - W(W-1)/2 (query, key) pairs instead of
// S(S+1)/2. The kernel is charged W keys per query (S under full attention,
// the Megatron-LM count), or W - W^2/(2S) with the causal saving (S/2 under
// full attention, the same convention at W = S). Serving keeps the last W
// tokens of each sequence in the KV cache (a rolling buffer) and a decode
// step reads W of them. Window blocks are otherwise full attention: the same
// projections, tp split and fused kernel (whose activations do not depend on
// the window).
#include "stg/models/blocks/block_pattern.h"
#include "stg/models/flag_binding.h"
#include "stg/models/hf_fields.h"
#include "stg/models/mixers/mixer_row.h"
#include "stg/models/parts/attention.h"

namespace stg::models {

namespace {

constexpr const char* kWindow = "--window";
constexpr const char* kGlobalEvery = "--global_every";

extern const MixerRow kSlidingWindow;

std::optional<int64_t> flag(const Options& o, const char* name) {
  const auto it = o.component_flags.find(name);
  if (it == o.component_flags.end()) return std::nullopt;
  return it->second;
}

// The most tokens a query of this run sees: the sequence in training, the
// last decode step's context in serving.
int64_t longest_context(const std::map<std::string, int64_t>& v, const Options& o) {
  if (!o.serving) return v.at("Seq");
  return o.serving->prompt_len + o.serving->decode_steps;
}

void place(DecoderSpec& d, const std::map<std::string, int64_t>& v, const Options& o,
           std::vector<std::string>& notes) {
  const std::optional<int64_t> window = flag(o, kWindow);
  const int64_t every = flag(o, kGlobalEvery).value_or(0);
  if (!window) {
    if (flag(o, kGlobalEvery)) notes.push_back("--global_every has no effect without --window");
    return;
  }
  const int64_t longest = longest_context(v, o);
  if (*window >= longest) {
    notes.push_back("--window " + num(*window) + " is at least the longest context (" +
                    num(longest) + " tokens): every block attends over all of it");
    return;
  }
  // Serving: the cache keeps the window from the prefill on, so every decode
  // step reads the same W tokens (a window the context outgrows part way
  // would make the steps differ in more than a constant growth).
  if (o.serving)
    require(*window <= o.serving->prompt_len,
            "--window " + num(*window) + " lies between --prompt_len " +
                num(o.serving->prompt_len) + " and the last decode step's context " + num(longest) +
                ": stg infer models a window that the prompt fills; use --window <= " +
                num(o.serving->prompt_len) + " or >= " + num(longest));
  // Every N-th block keeps global attention: blocks N-1, 2N-1, ...
  const BlockPattern global{.period = every, .offset = every - 1};
  for (size_t i = 0; i < d.blocks.size(); ++i) {
    BlockSpec& b = d.blocks[i];
    if (global.has(i)) continue;
    require(b.mixer == &mha_row(),
            "--window applies to multi-head and grouped-query attention; this model's blocks use "
            "multi-head latent attention: drop --window");
    // The window, then the attention's own options.
    b.mixer = &kSlidingWindow;
    b.mixer_options.insert(b.mixer_options.begin(), *window);
  }
}

void check(const std::vector<int64_t>&, const std::map<std::string, int64_t>&, const Options& o,
           const mesh::Degrees& degree) {
  const int64_t cp = degree["sp"];
  if (cp == 1) return;
  const int64_t window = o.component_flags.at(kWindow);
  if (o.serving)
    require(window % cp == 0, "--window " + num(window) + " is not divisible by --cp " + num(cp) +
                                  ": each context-parallel rank keeps a whole share of the "
                                  "window's KV cache");
}

// Mistral's sliding_window (null: none) and Gemma's sliding_window_pattern.
// A config with use_sliding_window (Qwen2, Qwen3) is its family's to read:
// its windowed layers are the last ones (max_window_layers), which no
// --global_every describes.
void read_hf(const HfConfig& cfg, std::map<std::string, int64_t>& flags) {
  std::string found;
  if (cfg.lookup({"use_sliding_window"}, found)) return;
  const std::optional<int64_t> window = cfg.optional_size({"sliding_window"});
  if (!window) return;
  flags[kWindow] = *window;
  if (const std::optional<int64_t> every = cfg.optional_size({"sliding_window_pattern"}))
    flags[kGlobalEvery] = *every;
}

// A fused kernel keeps what full attention keeps.
report::ActivationBytes activations(const std::vector<int64_t>& options, const expr::Values& values,
                                    double s, double b) {
  return mha_row().activations({options.begin() + 1, options.end()}, values, s, b);
}

graph::Graph build(const Layout& l, const BlockSpec& spec, const PartChoices& choices,
                   const ContextParallel& cp, const KvCache& kv) {
  const expr::Expr w = c(spec.mixer_options.at(0));
  // Per query: W keys; with the causal saving the band's W*S - W^2/2 pairs
  // over S queries.
  const expr::Expr causal = w - w * w / (c(2) * dims().seq);
  const AttentionOptions a =
      AttentionOptions::of({spec.mixer_options.begin() + 1, spec.mixer_options.end()});
  return attention(l, a, choices, cp, kv, AttentionSpan{w, causal, w});
}

const MixerRow kSlidingWindow = {
    "sliding_window",
    "mha",  // the attention it wraps
    {{kWindow,
      "sliding-window attention: each query attends over the last W tokens, its own included "
      "(Mistral, Gemma; decoder models)",
      "none: full attention", 1},
     {kGlobalEvery,
      "with --window: every N-th block keeps full attention (Gemma 2: 2, Gemma 3: 6; 0: every "
      "block windowed)",
      "0", 0}},
    place,
    check,
    read_hf,
    activations,
    build,
    ServingState::kKvCache,
    nullptr,
    nullptr,
    nullptr,
    mha_row,  // its options after the window: the attention's
    1,
    {nullptr, kWindow},  // the ring's chunks span the whole sequence
};

}  // namespace

const MixerRow& sliding_window_row() { return kSlidingWindow; }

}  // namespace stg::models
