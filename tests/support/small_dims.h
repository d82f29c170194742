// The component rows' flags of a small DeepSeek-style model (MLA and MoE),
// which the matrix, the multi-token prediction and the plans tests share:
// MLA with query / key-value ranks 32 / 16 and heads of 16 + 8 rotary dims
// (values 16); `experts` routed experts of `dff_expert`, 2 chosen per token,
// and one shared expert.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "stg/options.h"

namespace stg_test {

// The flags with their values, in --help order.
inline std::vector<std::pair<std::string, int64_t>> small_mla_moe_flags(int64_t experts = 4,
                                                                        int64_t dff_expert = 32) {
  return {{"--experts", experts},     {"--kexperts", 2},         {"--dff_expert", dff_expert},
          {"--shared_experts", 1},    {"--q_lora_rank", 32},     {"--kv_lora_rank", 16},
          {"--qk_nope_head_dim", 16}, {"--qk_rope_head_dim", 8}, {"--v_head_dim", 16}};
}

// Sets them on `o` (as the command line would).
inline void set_small_mla_moe(stg::Options& o, int64_t experts = 4, int64_t dff_expert = 32) {
  for (const auto& [flag, value] : small_mla_moe_flags(experts, dff_expert))
    o.component_flags[flag] = value;
}

}  // namespace stg_test
