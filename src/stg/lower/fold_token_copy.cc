#include "stg/lower/fold_token_copy.h"

#include <algorithm>
#include <cstdint>

namespace stg::lower {

void fold_token_copies(std::vector<LoweredNode>& nodes, std::vector<bool>& removed,
                       const std::vector<bool>& token_copy, const hardware::RooflineFigures& hw) {
  const int n = static_cast<int>(nodes.size());
  for (int i = 0; i < n; ++i) {
    const LoweredNode& copy = nodes[i];
    if (removed[i] || !token_copy[i] || copy.kind != NodeKind::kComp || copy.per_step ||
        !copy.data_deps.empty() || !copy.ctrl_deps.empty() || copy.tensor_size == 0 ||
        hardware::roofline_ns(static_cast<uint64_t>(std::max<int64_t>(copy.num_ops, 0)),
                           copy.tensor_size, hw) > 0)
      continue;
    int into = -1;
    for (int j = i + 1; j < n && into < 0; ++j)
      if (!removed[j] && nodes[j].kind == NodeKind::kComp &&
          nodes[j].micro_batch == copy.micro_batch)
        into = j;
    if (into < 0) continue;
    LoweredNode& next = nodes[into];
    if (next.per_step) {
      next.first_step_num_ops += copy.num_ops;
      next.first_step_tensor_size += copy.tensor_size;
    } else {
      next.num_ops += copy.num_ops;
      next.tensor_size += copy.tensor_size;
    }
    int successor = -1;
    for (int j = 0; j < n; ++j)
      if (!removed[j] && nodes[j].succeeds == i) {
        successor = j;
        nodes[j].succeeds = -1;
      }
    for (int j = 0; j < n; ++j) {
      if (removed[j]) continue;
      auto& deps = nodes[j].data_deps;
      const auto end = std::remove(deps.begin(), deps.end(), static_cast<uint64_t>(i));
      if (end == deps.end()) continue;
      deps.erase(end, deps.end());
      if (successor >= 0 && nodes[j].per_step)
        nodes[j].previous_step_deps.push_back(static_cast<uint64_t>(successor));
    }
    removed[i] = true;
  }
}

}  // namespace stg::lower
