#include "stg/models/hf_config.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "stg/models/model_kind.h"

// nlohmann::json: the JSON library the build already links (Debian package
// nlohmann-json3-dev, found with find_package(nlohmann_json)); a config.json
// is small, so parsing it whole into a DOM is the simplest correct choice.
#include <nlohmann/json.hpp>

namespace stg::models {
namespace {

using nlohmann::json;

enum class Family { kLlama, kMoe, kGpt };

struct Architecture {
  const char* name;
  Family family;
  const char* model_type;
};

constexpr Architecture kArchitectures[] = {
    {"LlamaForCausalLM", Family::kLlama, "llama"}, {"MistralForCausalLM", Family::kLlama, "llama"},
    {"MixtralForCausalLM", Family::kMoe, "moe"},   {"GPT2LMHeadModel", Family::kGpt, "gpt"},
    {"GPTNeoXForCausalLM", Family::kGpt, "gpt"},   {"GPTJForCausalLM", Family::kGpt, "gpt"},
};

class Config {
 public:
  Config(std::string path, json root) : path_(std::move(path)), root_(std::move(root)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw UsageError("--hf_config " + path_ + ": " + what);
  }

  // The value of the first of `names` that is present and not null, or
  // nullptr. Sets `found` to the name that matched.
  const json* lookup(const std::vector<std::string>& names, std::string& found) const {
    for (const std::string& n : names) {
      auto it = root_.find(n);
      if (it != root_.end() && !it->is_null()) {
        found = n;
        return &*it;
      }
    }
    return nullptr;
  }

  std::optional<int64_t> optional_size(const std::vector<std::string>& names) const {
    std::string found;
    const json* v = lookup(names, found);
    if (!v) return std::nullopt;
    return size_of(found, *v);
  }

  int64_t required_size(const std::vector<std::string>& names) const {
    std::optional<int64_t> v = optional_size(names);
    if (!v) fail("field " + spell(names) + " is missing: a " + architecture_ + " config needs it");
    return *v;
  }

  void set_architecture(const std::string& a) { architecture_ = a; }

 private:
  static std::string spell(const std::vector<std::string>& names) {
    std::string s;
    for (size_t i = 0; i < names.size(); ++i) {
      if (i > 0) s += " or ";
      s += "'" + names[i] + "'";
    }
    return s;
  }

  int64_t size_of(const std::string& field, const json& v) const {
    const bool fits =
        v.is_number_integer() &&
        (!v.is_number_unsigned() ||
         v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
    if (!fits || v.get<int64_t>() < 1) {
      std::string text = v.dump();
      if (text.size() > 40) text = text.substr(0, 37) + "...";
      fail("field '" + field + "' is " + text + ": expected a whole number >= 1");
    }
    return v.get<int64_t>();
  }

  std::string path_;
  json root_;
  std::string architecture_;
};

std::string read_text(const std::string& path) {
  auto fail = [&](const std::string& why) {
    throw UsageError("--hf_config " + path + ": cannot read the file (" + why +
                     "): give the path of a Hugging Face config.json");
  };
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail("read error");
  return text.str();
}

json parse(const std::string& path, const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // parse errors and out-of-range numbers
    std::string what = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix.
    if (!what.empty() && what[0] == '[') {
      const size_t end = what.find("] ");
      if (end != std::string::npos) what = what.substr(end + 2);
    }
    // "last read: '...'" quotes the input: keep the one-line message printable.
    for (char& c : what)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    throw UsageError("--hf_config " + path + " is not valid JSON: " + what);
  }
}

void fill(std::optional<int64_t>& field, std::optional<int64_t> value) {
  if (!field.has_value() && value.has_value()) field = value;
}

// The config's model class (the first of its "architectures"), which
// becomes the architecture `cfg`'s messages name.
const Architecture* find_architecture(Config& cfg) {
  std::string found;
  const json* archs = cfg.lookup({"architectures"}, found);
  if (!archs)
    cfg.fail(
        "field 'architectures' is missing: it names the model class, e.g. "
        "[\"LlamaForCausalLM\"]");
  if (!archs->is_array() || archs->empty() || !(*archs)[0].is_string())
    cfg.fail("field 'architectures' is not a list of class names, e.g. [\"LlamaForCausalLM\"]");
  const std::string name = (*archs)[0].get<std::string>();
  const Architecture* arch = nullptr;
  for (const Architecture& a : kArchitectures)
    if (name == a.name) arch = &a;
  if (!arch)
    cfg.fail("architecture '" + name +
             "' is not supported: use a Llama-, Mistral-, Mixtral- or GPT-2/NeoX-style config");
  cfg.set_architecture(name);
  return arch;
}

}  // namespace

std::vector<std::string> apply_hf_config(const std::string& path, Options& o) {
  std::vector<std::string> notes;
  json root = parse(path, read_text(path));
  if (!root.is_object())
    throw UsageError("--hf_config " + path +
                     " is not a JSON object: give the path of a Hugging Face config.json");
  Config cfg(path, std::move(root));
  const Architecture* arch = find_architecture(cfg);
  const std::string name = arch->name;

  // Every field is read (and checked) before Options changes, so a refused
  // config leaves `o` as it was.
  const bool gpt = arch->family == Family::kGpt;
  // GPT-2 and GPT-J spell the fields the old way; GPT-NeoX uses the new names.
  using Names = std::vector<std::string>;
  const Names hidden_names = gpt ? Names{"hidden_size", "n_embd"} : Names{"hidden_size"};
  const Names heads_names =
      gpt ? Names{"num_attention_heads", "n_head"} : Names{"num_attention_heads"};
  const Names layers_names =
      gpt ? Names{"num_hidden_layers", "n_layer"} : Names{"num_hidden_layers"};
  const Names seq_names =
      gpt ? Names{"max_position_embeddings", "n_positions"} : Names{"max_position_embeddings"};

  const int64_t hidden = cfg.required_size(hidden_names);
  // GPT-2/GPT-J: n_inner null or absent means 4 * n_embd.
  if (hidden > std::numeric_limits<int64_t>::max() / 4)
    throw UsageError("--hf_config " + path + ": the hidden size is too large");
  const int64_t ffn = gpt ? cfg.optional_size({"intermediate_size", "n_inner"}).value_or(4 * hidden)
                          : cfg.required_size({"intermediate_size"});
  const int64_t heads = cfg.required_size(heads_names);
  const int64_t layers = cfg.required_size(layers_names);
  const int64_t vocab = cfg.required_size({"vocab_size"});
  // Not a property of the weights: without it --seq keeps the generator's default.
  const std::optional<int64_t> seq = cfg.optional_size(seq_names);
  std::optional<int64_t> kv_heads, experts, experts_per_token;
  if (!gpt) kv_heads = cfg.optional_size({"num_key_value_heads"}).value_or(heads);
  if (arch->family == Family::kMoe) {
    experts = cfg.required_size({"num_local_experts"});
    experts_per_token = cfg.required_size({"num_experts_per_tok"});
  }
  // stg's attention has heads of hidden_size / num_attention_heads; some
  // configs (e.g. Mistral NeMo) set a different head_dim explicitly.
  if (const std::optional<int64_t> head_dim = cfg.optional_size({"head_dim"});
      head_dim && *head_dim * heads != hidden)
    notes.push_back("--hf_config " + path + ": head_dim " + std::to_string(*head_dim) +
                    " differs from hidden_size / num_attention_heads; stg models heads of "
                    "hidden_size / num_attention_heads");

  // As with presets: the config chooses the model type; one the user chose
  // must match it.
  const std::string type = arch->model_type;
  const ModelKind kind = parse_model_kind(type);
  if (o.model && *o.model != kind)
    cfg.fail("architecture '" + name + "' is a '" + type + "' model but --model_type '" +
             model_name(*o.model).name + "' was given: drop --model_type or use --model_type " +
             type);
  o.model = kind;

  fill(o.dmodel, hidden);
  fill(o.dff, ffn);
  fill(o.head, heads);
  fill(o.num_stacks, layers);
  fill(o.dvocal, vocab);
  fill(o.seq, seq);
  // gpt has no grouped-query attention and gpt/llama have no experts: the
  // generator would note these as "given but unused", so leave them unset.
  fill(o.kvhead, kv_heads);
  fill(o.experts, experts);
  fill(o.kexperts, experts_per_token);
  return notes;
}

}  // namespace stg::models
