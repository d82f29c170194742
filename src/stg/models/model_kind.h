// Names of the built-in models: `--model_type NAME` (and the reference's
// aliases) to ModelKind and back. The builders are in models/registry.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stg/options.h"

namespace stg::models {

struct ModelName {
  ModelKind kind;
  std::string name;                  // canonical --model_type
  std::vector<std::string> aliases;  // other names the reference used
  std::string summary;               // one line for --help and `stg models`
};

const std::vector<ModelName>& model_kinds();
// By name or alias; nullptr when unknown.
const ModelName* find_model(std::string_view name);
const ModelName& model_name(ModelKind kind);
// "transformer, gpt (dense), llama or moe"
std::string model_names();

}  // namespace stg::models
