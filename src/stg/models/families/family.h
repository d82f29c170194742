// A model family (`--model_type NAME`): one row of the family registry
// (families/registry.h) holding everything that is the family's own: its
// names, how its workload and decoder are made from the flags, the Hugging
// Face model classes it reads and how, and its presets. A new family is one
// file defining its Family plus its registry row (docs/architecture.md
// "How to add a model family").
#pragma once

#include <string>
#include <vector>

#include "stg/models/blocks/block_spec.h"
#include "stg/models/hf_fields.h"
#include "stg/models/presets.h"
#include "stg/models/workload.h"

namespace stg::models {

struct Family {
  std::string name;                  // canonical --model_type
  std::vector<std::string> aliases;  // other names the reference used
  std::string summary;               // one line for --help
  // Its workload from the flags (decoder_workload for a decoder family).
  Workload (*workload)(const Options& o, const DecoderPolicy& f) = nullptr;
  // A decoder family's blocks (num_blocks of them) and ends from the flags;
  // null: not a decoder.
  DecoderSpec (*decoder)(const Options& o, int num_blocks) = nullptr;
  // Flags beyond the common dimensions that its models read (presets and
  // HF configs leave the others unset, so that no "has no effect" note is
  // printed).
  bool reads_kvhead = false, reads_experts = false;
  // Whether its embeddings are tied is the model's (Options::
  // model_tied_embeddings from a preset or a config), not the family's.
  bool reads_tied_embeddings = false;
  // Hugging Face: the model classes ("architectures"[0] of a config.json)
  // that are this family, and how their fields are read.
  std::vector<std::string> hf_architectures;
  HfDims (*read_hf)(const HfConfig& cfg) = nullptr;
  // Presets (`stg models`, --model NAME), each of this family.
  std::vector<Preset> presets;
};

// The families of the registry (families/registry.cc); each file defines one.
const Family& transformer_family();
const Family& gpt_family();
const Family& llama_family();
const Family& moe_family();
const Family& qwen2_family();
const Family& qwen3_family();
const Family& qwen3_moe_family();
const Family& deepseek_family();

}  // namespace stg::models
