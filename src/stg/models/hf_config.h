// `--hf_config PATH`: model dimensions from a Hugging Face config.json.
#pragma once

#include <string>
#include <vector>

#include "stg/options.h"

namespace stg::models {

// Reads the Hugging Face config.json at `path` and, like apply_preset, sets
// o.model (the family) and every dimension the user did not give explicitly
// (std::nullopt fields); explicit flags win. architectures[0] picks the family
// (each family lists its classes): LlamaForCausalLM and MistralForCausalLM -> llama,
// MixtralForCausalLM
// -> moe, GPT2LMHeadModel, GPTNeoXForCausalLM and GPTJForCausalLM -> gpt.
// Fields: hidden_size, intermediate_size, num_attention_heads,
// num_key_value_heads (default num_attention_heads), num_hidden_layers,
// vocab_size, num_local_experts, num_experts_per_tok, and
// max_position_embeddings -> seq (optional); GPT-2/GPT-J spell them n_embd,
// n_inner (null or absent: 4 * n_embd), n_head, n_layer, n_positions.
// Throws UsageError naming --hf_config and the field on an unreadable file,
// invalid JSON, an unsupported architecture, a missing required field, a
// value that is not a whole number >= 1, or a --model_type that differs from
// the config's.
// Returns notes for the user (config fields stg does not model).
std::vector<std::string> apply_hf_config(const std::string& path, Options& o);

}  // namespace stg::models
