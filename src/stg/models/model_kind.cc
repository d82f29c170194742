#include "stg/models/model_kind.h"

#include <stdexcept>

namespace stg::models {

const std::vector<ModelName>& model_kinds() {
  static const std::vector<ModelName> all = {
      {ModelKind::kTransformer, "transformer", {}, "the seed's transformer (default)"},
      {ModelKind::kGpt, "gpt", {"dense"}, "decoder-only, multi-head attention"},
      {ModelKind::kLlama, "llama", {}, "grouped-query attention, gated FFN"},
      {ModelKind::kMoe, "moe", {}, "llama with a mixture-of-experts FFN"},
  };
  return all;
}

const ModelName* find_model(std::string_view name) {
  for (const ModelName& m : model_kinds()) {
    if (m.name == name) return &m;
    for (const std::string& alias : m.aliases)
      if (alias == name) return &m;
  }
  return nullptr;
}

const ModelName& model_name(ModelKind kind) {
  for (const ModelName& m : model_kinds())
    if (m.kind == kind) return m;
  throw std::logic_error("a model kind without a name");
}

std::string model_names() {
  const auto& all = model_kinds();
  std::string out;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i > 0) out += i + 1 == all.size() ? " or " : ", ";
    out += all[i].name;
    for (const std::string& alias : all[i].aliases) out += " (" + alias + ")";
  }
  return out;
}

}  // namespace stg::models
