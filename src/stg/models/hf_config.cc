#include "stg/models/hf_config.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "stg/models/families/registry.h"
#include "stg/models/hf_fields.h"
#include "stg/models/mixers/mixer_row.h"

// nlohmann::json: the JSON library the build already links (Debian package
// nlohmann-json3-dev, found with find_package(nlohmann_json)); a config.json
// is small, so parsing it whole into a DOM is the simplest correct choice.
#include <nlohmann/json.hpp>

namespace stg::models {
namespace {

using nlohmann::json;

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
// becomes the architecture `cfg`'s messages name, and its family.
const Family& find_architecture(HfConfig& cfg, std::string& name) {
  std::string found;
  const json* archs = cfg.lookup({"architectures"}, found);
  if (!archs)
    cfg.fail(
        "field 'architectures' is missing: it names the model class, e.g. "
        "[\"LlamaForCausalLM\"]");
  if (!archs->is_array() || archs->empty() || !(*archs)[0].is_string())
    cfg.fail("field 'architectures' is not a list of class names, e.g. [\"LlamaForCausalLM\"]");
  name = (*archs)[0].get<std::string>();
  const Family* family = family_of_architecture(name);
  if (!family)
    cfg.fail("architecture '" + name +
             "' is not supported: use a Llama-, Mistral-, Mixtral-, Qwen2-, Qwen3-, Qwen3-MoE-, "
             "DeepSeek-V3- or GPT-2/NeoX-style config");
  cfg.set_architecture(name);
  return *family;
}

// Fields that do not change a trace: names, token ids, numerics of the
// norms and activations, position encodings, dropout, routing details
// that keep each token's expert count, training-only losses.
bool without_effect(const std::string& field) {
  static const std::set<std::string> kFields = {"_name_or_path",
                                                "architectures",
                                                "model_type",
                                                "torch_dtype",
                                                "transformers_version",
                                                "bos_token_id",
                                                "eos_token_id",
                                                "pad_token_id",
                                                "initializer_range",
                                                "use_cache",
                                                "rms_norm_eps",
                                                "layer_norm_eps",
                                                "layer_norm_epsilon",
                                                "hidden_act",
                                                "activation_function",
                                                "rope_theta",
                                                "rope_scaling",
                                                "rope_interleave",
                                                "rotary_dim",
                                                "rotary_pct",
                                                "rotary_emb_base",
                                                "attention_dropout",
                                                "hidden_dropout",
                                                "embd_pdrop",
                                                "resid_pdrop",
                                                "attn_pdrop",
                                                "n_ctx",
                                                "summary_activation",
                                                "summary_first_dropout",
                                                "summary_proj_to_labels",
                                                "summary_type",
                                                "summary_use_proj",
                                                "scale_attn_weights",
                                                "reorder_and_upcast_attn",
                                                "scale_attn_by_inverse_layer_idx",
                                                "output_router_logits",
                                                "router_aux_loss_coef",
                                                "router_jitter_noise",
                                                "aux_loss_alpha",
                                                "seq_aux",
                                                "norm_topk_prob",
                                                "scoring_func",
                                                "topk_method",
                                                "n_group",
                                                "topk_group",
                                                "routed_scaling_factor",
                                                "ep_size",
                                                "task_specific_params",
                                                "auto_map"};
  return kFields.count(field) > 0;
}

// Fields whose usual value is what stg models: only another value changes
// the model. A value of another JSON type is refused (strict types).
const std::map<std::string, json>& modelled_values() {
  static const std::map<std::string, json> kValues = {{"tie_word_embeddings", false},
                                                      {"attention_bias", false},
                                                      {"mlp_bias", false},
                                                      {"pretraining_tp", 1},
                                                      {"use_sliding_window", false},
                                                      {"use_parallel_residual", false},
                                                      {"parallel_attn", false},
                                                      {"use_qkv_bias", false},
                                                      {"bias", false}};
  return kValues;
}

// "fields stg does not model (...): sliding_window 4096, ..." for the
// config's fields that no reader used and that change the model, or "".
std::string unmodelled_fields(const HfConfig& cfg) {
  std::string list;
  for (const auto& [field, value] : cfg.unread()) {
    if (without_effect(field)) continue;
    const auto usual = modelled_values().find(field);
    if (usual != modelled_values().end()) {
      if (value.type() != usual->second.type() &&
          !(value.is_number_integer() && usual->second.is_number_integer())) {
        std::string text = value.dump();
        if (text.size() > 40) text = text.substr(0, 37) + "...";
        cfg.fail("field '" + field + "' is " + text + ": expected " +
                 (usual->second.is_boolean() ? "true or false" : "a whole number"));
      }
      if (value == usual->second) continue;
    }
    std::string text = value.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    list += (list.empty() ? "" : ", ") + field + " " + text;
  }
  if (list.empty()) return "";
  return "fields stg does not model (the trace is as without them): " + list;
}

}  // namespace

std::vector<std::string> apply_hf_config(const std::string& path, Options& o) {
  std::vector<std::string> notes;
  json root = parse(path, read_text(path));
  if (!root.is_object())
    throw UsageError("--hf_config " + path +
                     " is not a JSON object: give the path of a Hugging Face config.json");
  HfConfig cfg(path, std::move(root));
  std::string name;
  const Family& family = find_architecture(cfg, name);

  // Every field is read (and checked) before Options changes, so a refused
  // config leaves `o` as it was. The family reads its fields.
  const HfDims d = family.read_hf(cfg);
  const std::map<std::string, int64_t> mixer_flags = read_mixers_hf(cfg);
  for (const std::string& note : d.notes) notes.push_back("--hf_config " + path + ": " + note);
  // The older families' attention has heads of hidden_size /
  // num_attention_heads; some configs (e.g. Mistral NeMo) set a different
  // head_dim explicitly. (Families that model head_dim read it.)
  if (const std::optional<int64_t> head_dim = cfg.optional_size({"head_dim"});
      !d.row_flags.count("--head_dim") && head_dim && *head_dim * d.heads != d.hidden)
    notes.push_back("--hf_config " + path + ": head_dim " + std::to_string(*head_dim) +
                    " differs from hidden_size / num_attention_heads; stg models heads of "
                    "hidden_size / num_attention_heads");

  if (const std::string unread = unmodelled_fields(cfg); !unread.empty())
    notes.push_back("--hf_config " + path + ": " + unread);

  // As with presets: the config chooses the model type; one the user chose
  // must match it.
  const std::string& type = family.name;
  if (o.model && &family_of(o) != &family)
    cfg.fail("architecture '" + name + "' is a '" + type + "' model but --model_type '" +
             family_of(o).name + "' was given: drop --model_type or use --model_type " + type);
  o.model = family.name;

  fill(o.dmodel, d.hidden);
  fill(o.dff, d.ffn);
  fill(o.head, d.heads);
  fill(o.num_stacks, d.layers);
  fill(o.dvocal, d.vocab);
  fill(o.seq, d.seq);
  fill(o.dense_blocks, d.dense_blocks);
  fill(o.mtp_depth, d.mtp_depth);
  if (!o.model_tied_embeddings) o.model_tied_embeddings = d.tied_embeddings;
  // The rows' flags, as the family and the mixer rows read them (gpt has no
  // grouped-query attention and gpt/llama have no experts: their readers
  // leave those unset, so the generator notes nothing).
  for (const auto& [flag, value] : d.row_flags) o.component_flags.emplace(flag, value);
  for (const auto& [flag, value] : mixer_flags) o.component_flags.emplace(flag, value);
  return notes;
}

}  // namespace stg::models
