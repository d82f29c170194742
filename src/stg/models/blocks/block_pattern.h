// Which blocks of a decoder take a component, as a family or a row lays
// them out: the first `first` blocks (DeepSeek-V3's dense blocks before its
// MoE blocks) and every `period`-th block from `offset` (Gemma's global
// attention every N-th block, Jamba's attention among Mamba blocks).
#pragma once

#include <cstdint>
#include <vector>

#include "stg/models/blocks/block_spec.h"

namespace stg::models {

struct BlockPattern {
  int64_t first = 0;               // blocks 0 .. first-1
  int64_t period = 0, offset = 0;  // blocks offset, offset + period, ... (period 0: none)

  bool has(size_t block) const {
    const auto i = static_cast<int64_t>(block);
    return i < first || (period > 0 && i % period == offset);
  }
  // Whether each of `n` blocks is in the pattern.
  std::vector<bool> expand(size_t n) const {
    std::vector<bool> in(n);
    for (size_t i = 0; i < n; ++i) in[i] = has(i);
    return in;
  }
  // `n` blocks: `in` where the pattern has them, `out` elsewhere.
  std::vector<BlockSpec> blocks(size_t n, const BlockSpec& in, const BlockSpec& out) const {
    std::vector<BlockSpec> b;
    for (size_t i = 0; i < n; ++i) b.push_back(has(i) ? in : out);
    return b;
  }
};

}  // namespace stg::models
