// The model family registry: one table of families (families/family.h), in
// the order --help and `stg models` list them. Options holds a family by
// name (Options::model); these resolve it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stg/models/families/family.h"

namespace stg::models {

const std::vector<const Family*>& families();
// By name or alias; nullptr when unknown.
const Family* lookup_family(std::string_view name);
// By name or alias; UsageError naming --model_type, the closest name and
// the valid ones when unknown.
const Family& find_family(std::string_view name);
// The family of a run: Options::model, the transformer when unset.
const Family& family_of(const Options& o);
// The family a Hugging Face model class belongs to, or nullptr.
const Family* family_of_architecture(std::string_view hf_class);
// "transformer, gpt (dense), llama or moe"
std::string family_names();

}  // namespace stg::models
