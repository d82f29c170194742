#include "stg/models/hf_fields.h"

#include <limits>

#include "stg/options.h"

namespace stg::models {

using nlohmann::json;

namespace {

std::string spell(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += " or ";
    s += "'" + names[i] + "'";
  }
  return s;
}

}  // namespace

void HfConfig::fail(const std::string& what) const {
  throw UsageError("--hf_config " + path_ + ": " + what);
}

std::vector<std::pair<std::string, json>> HfConfig::unread() const {
  std::vector<std::pair<std::string, json>> out;
  for (const auto& [key, value] : root_.items())
    if (!value.is_null() && !asked_.count(key)) out.emplace_back(key, value);
  return out;
}

const json* HfConfig::lookup(const std::vector<std::string>& names, std::string& found) const {
  asked_.insert(names.begin(), names.end());
  for (const std::string& n : names) {
    auto it = root_.find(n);
    if (it != root_.end() && !it->is_null()) {
      found = n;
      return &*it;
    }
  }
  return nullptr;
}

std::optional<int64_t> HfConfig::optional_size(const std::vector<std::string>& names) const {
  std::string found;
  const json* v = lookup(names, found);
  if (!v) return std::nullopt;
  return size_of(found, *v);
}

std::optional<int64_t> HfConfig::optional_count(const std::vector<std::string>& names) const {
  std::string found;
  const json* v = lookup(names, found);
  if (!v) return std::nullopt;
  return size_of(found, *v, 0);
}

int64_t HfConfig::required_size(const std::vector<std::string>& names) const {
  std::optional<int64_t> v = optional_size(names);
  if (!v) fail("field " + spell(names) + " is missing: a " + architecture_ + " config needs it");
  return *v;
}

int64_t HfConfig::size_of(const std::string& field, const json& v, int64_t least) const {
  const bool fits =
      v.is_number_integer() &&
      (!v.is_number_unsigned() ||
       v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
  if (!fits || v.get<int64_t>() < least) {
    std::string text = v.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    fail("field '" + field + "' is " + text +
         ": expected a whole number >= " + std::to_string(least));
  }
  return v.get<int64_t>();
}

bool optional_bool(const HfConfig& cfg, const std::string& name, bool fallback) {
  std::string found;
  const json* v = cfg.lookup({name}, found);
  if (!v) return fallback;
  if (!v->is_boolean()) {
    std::string text = v->dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    cfg.fail("field '" + name + "' is " + text + ": expected true or false");
  }
  return v->get<bool>();
}

bool read_tied_embeddings(const HfConfig& cfg, bool fallback) {
  return optional_bool(cfg, "tie_word_embeddings", fallback);
}

HfDims read_decoder_dims(const HfConfig& cfg, bool gpt_names) {
  // GPT-2 and GPT-J spell the fields the old way; GPT-NeoX uses the new names.
  using Names = std::vector<std::string>;
  const auto names = [&](const char* now, const char* old) {
    return gpt_names ? Names{now, old} : Names{now};
  };
  HfDims d;
  d.hidden = cfg.required_size(names("hidden_size", "n_embd"));
  // GPT-2/GPT-J: n_inner null or absent means 4 * n_embd.
  if (d.hidden > std::numeric_limits<int64_t>::max() / 4) cfg.fail("the hidden size is too large");
  d.ffn = gpt_names ? cfg.optional_size({"intermediate_size", "n_inner"}).value_or(4 * d.hidden)
                    : cfg.required_size({"intermediate_size"});
  d.heads = cfg.required_size(names("num_attention_heads", "n_head"));
  d.layers = cfg.required_size(names("num_hidden_layers", "n_layer"));
  d.vocab = cfg.required_size({"vocab_size"});
  // Not a property of the weights: without it --seq keeps the generator's default.
  d.seq = cfg.optional_size(names("max_position_embeddings", "n_positions"));
  return d;
}

}  // namespace stg::models
