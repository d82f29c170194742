#include "stg/models/families/registry.h"

#include <algorithm>

#include "stg/util/closest.h"
#include "stg/util/ignore_case.h"

namespace stg::models {

const std::vector<const Family*>& families() {
  static const std::vector<const Family*> all = {
      &transformer_family(), &gpt_family(),   &llama_family(),     &moe_family(),
      &qwen2_family(),       &qwen3_family(), &qwen3_moe_family(), &deepseek_family(),
  };
  return all;
}

const Family* lookup_family(std::string_view name) {
  for (const Family* f : families()) {
    if (util::equal_ignoring_case(f->name, name)) return f;
    for (const std::string& alias : f->aliases)
      if (util::equal_ignoring_case(alias, name)) return f;
  }
  return nullptr;
}

const Family& find_family(std::string_view text) {
  if (const Family* f = lookup_family(text)) return *f;
  std::vector<std::string> names;
  for (const Family* f : families()) {
    names.push_back(f->name);
    names.insert(names.end(), f->aliases.begin(), f->aliases.end());
  }
  // "--model_type 'lama' is unknown: did you mean llama? (use ...)"
  const std::string close = util::closest(std::string(text), names);
  const std::string what = "--model_type '" + std::string(text) + "' is unknown: ";
  throw UsageError(close.empty()
                       ? what + "use " + family_names()
                       : what + "did you mean " + close + "? (use " + family_names() + ")");
}

const Family& family_of(const Options& o) { return find_family(o.model.value_or("transformer")); }

const Family* family_of_architecture(std::string_view hf_class) {
  for (const Family* f : families())
    if (std::find(f->hf_architectures.begin(), f->hf_architectures.end(), hf_class) !=
        f->hf_architectures.end())
      return f;
  return nullptr;
}

std::string family_names() {
  const auto& all = families();
  std::string out;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i > 0) out += i + 1 == all.size() ? " or " : ", ";
    out += all[i]->name;
    for (const std::string& alias : all[i]->aliases) out += " (" + alias + ")";
  }
  return out;
}

}  // namespace stg::models
