// Named model presets (`stg models`, `--model NAME`): the published
// dimensions of well-known models, applied to stg::Options underneath the
// flags the user gave explicitly. Each family lists its own
// (families/family.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "stg/options.h"

namespace stg::models {

struct Preset {
  std::string name;         // as given to --model, e.g. "llama3-8b"
  std::string model_type;   // gpt, llama or moe
  std::string description;  // one short line: the model and where the numbers come from
  int64_t dmodel = 0;       // hidden size
  int64_t dff = 0;          // FFN intermediate size
  int64_t head = 0;         // attention (query) heads
  int64_t kvhead = 0;       // key/value heads (== head without grouped-query attention)
  int64_t num_stacks = 0;   // transformer layers
  int64_t dvocal = 0;       // vocabulary size
  int64_t experts = 0;      // experts per MoE layer; 0: not a MoE model
  int64_t kexperts = 0;     // experts chosen per token; 0: not a MoE model
  int64_t seq = 0;          // default sequence length (training context)
  // The 2025-26 families' own dimensions (0: the family has none).
  int64_t dense_blocks = 0;  // the first blocks dense, the rest MoE
  bool tied_embeddings = false;
  int64_t mtp_depth = 0;  // multi-token prediction modules (DeepSeek-V3: 1)
  // The component rows' flags it sets (models/row_flag.h), by flag name:
  // a head dimension of its own ("--head_dim"), the experts' widths, MLA's
  // dimensions.
  std::map<std::string, int64_t> row_flags = {};
};

// Every preset, family by family in the registry's order (`stg models`).
const std::vector<Preset>& presets();

// The preset called `name` (exact match), or nullptr.
const Preset* find_preset(std::string_view name);

// The text `stg models` prints: a header, then one line per preset with its
// name, model type, dimensions and description. Ends with a newline.
std::string models_table();

// Sets o.model (the family) and every dimension of `p` that the user did not give
// explicitly (fields that are std::nullopt); explicit flags win. Dimensions
// the preset's model type does not use are left alone (experts/kexperts for
// gpt/llama, kvhead for gpt), so the generator prints no note about them;
// the 2025-26 dimensions and the rows' flags are set when the preset has
// them (non-zero).
// Throws UsageError if the user chose a --model_type other than the preset's.
void apply_preset(const Preset& p, Options& o);

}  // namespace stg::models
