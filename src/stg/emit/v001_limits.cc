#include "stg/emit/v001_limits.h"

#include <algorithm>

namespace stg::emit {

std::optional<std::string> v001_comm_size_refusal(
    const std::vector<const lower::FlatStage*>& stages) {
  int64_t largest = 0;
  const LoweredNode* which = nullptr;
  size_t which_stage = 0;
  for (size_t s = 0; s < stages.size(); ++s) {
    if (!stages[s]) continue;
    const int last_step = std::max(stages[s]->decode_steps(), 1) - 1;
    for (const LoweredNode& n : stages[s]->one().nodes) {
      if (n.kind == NodeKind::kComp) continue;
      // Sizes grow linearly over decode steps: the largest is at an end.
      const int64_t size = std::max(n.comm_size_at(0), n.comm_size_at(last_step));
      if (size > largest) {
        largest = size;
        which = &n;
        which_stage = s;
      }
    }
  }
  if (largest <= kV001MaxCommSize) return std::nullopt;
  return "--chakra_schema_version v0.0.1 stores comm_size in 32 bits (at most " +
         std::to_string(kV001MaxCommSize) + "), but message " + which->name + " (stage " +
         std::to_string(which_stage) + ") has comm_size " + std::to_string(largest) +
         ": use --chakra_schema_version v0.0.4";
}

}  // namespace stg::emit
