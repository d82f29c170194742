// A Hugging Face config.json being read (`--hf_config`): its fields by
// name, checked as whole numbers, with messages that name the file and the
// field. Each family reads the fields of its model classes with it
// (models/families/family.h), into the dimensions stg models.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace stg::models {

class HfConfig {
 public:
  HfConfig(std::string path, nlohmann::json root)
      : path_(std::move(path)), root_(std::move(root)) {}

  [[noreturn]] void fail(const std::string& what) const;

  // The value of the first of `names` that is present and not null, or
  // nullptr. Sets `found` to the name that matched.
  const nlohmann::json* lookup(const std::vector<std::string>& names, std::string& found) const;
  std::optional<int64_t> optional_size(const std::vector<std::string>& names) const;
  // A count that may be 0 (a whole number >= 0).
  std::optional<int64_t> optional_count(const std::vector<std::string>& names) const;
  int64_t required_size(const std::vector<std::string>& names) const;

  // The model class the messages name ("a LlamaForCausalLM config needs it").
  void set_architecture(const std::string& a) { architecture_ = a; }

  // Marks `names` as read without using them (a field that only matters
  // when another one is set, e.g. sliding_window without use_sliding_window).
  void ignore(const std::vector<std::string>& names) const {
    asked_.insert(names.begin(), names.end());
  }
  // The fields of the config that no reader asked for and that are not null,
  // with their values ("sliding_window 4096"), in name order.
  std::vector<std::pair<std::string, nlohmann::json>> unread() const;

 private:
  int64_t size_of(const std::string& field, const nlohmann::json& v, int64_t least = 1) const;

  std::string path_;
  nlohmann::json root_;
  std::string architecture_;
  mutable std::set<std::string> asked_;  // every name lookup() was asked for
};

// What a config says about the model, as stg's flags (unset: it does not
// say, or the family has no such dimension).
struct HfDims {
  int64_t hidden = 0, ffn = 0, heads = 0, layers = 0, vocab = 0;
  std::optional<int64_t> seq;
  // The 2025-26 families' (docs/models_2025.md).
  std::optional<int64_t> dense_blocks, mtp_depth;
  // The component rows' flags (models/row_flag.h), by flag name: the
  // attention's KV heads and head dimension, MLA's dimensions, the experts'
  // counts and widths.
  std::map<std::string, int64_t> row_flags;
  std::optional<bool> tied_embeddings;
  // Fields that change the model but that stg does not model, by name.
  std::vector<std::string> notes;
};

// tie_word_embeddings (absent: `fallback`, the model class's default).
bool read_tied_embeddings(const HfConfig& cfg, bool fallback);
// A boolean field, or `fallback` when absent or null.
bool optional_bool(const HfConfig& cfg, const std::string& name, bool fallback);

// The fields every decoder family reads, in this order (so the first
// missing or bad one is the one named): hidden_size, intermediate_size,
// num_attention_heads, num_hidden_layers, vocab_size, max_position_embeddings
// (optional). `gpt_names`: GPT-2/GPT-J also spell them n_embd, n_inner
// (null or absent: 4 x n_embd), n_head, n_layer, n_positions.
HfDims read_decoder_dims(const HfConfig& cfg, bool gpt_names);

}  // namespace stg::models
