#include "stg/lower/step_growth.h"

#include <string>

namespace stg::lower {
namespace {

[[noreturn]] void unsupported(const StageGraph& s, const LoweredNode& n, const std::string& why) {
  throw FlatUnsupported("stage " + std::to_string(s.stage) + ": " + n.name + " " + why);
}

bool same_entries(const std::vector<TensorInfoRef>& a, const std::vector<TensorInfoRef>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i]->name != b[i]->name || a[i]->size != b[i]->size) return false;
  return true;
}

void check_same_node(const StageGraph& s, const LoweredNode& a, const LoweredNode& b) {
  if (a.kind != b.kind || a.name != b.name || a.data_deps != b.data_deps ||
      a.per_step != b.per_step || a.succeeds != b.succeeds || a.tag != b.tag ||
      a.previous_step_deps != b.previous_step_deps ||
      a.first_step_num_ops != b.first_step_num_ops ||
      a.first_step_tensor_size != b.first_step_tensor_size)
    unsupported(s, a, "changes with the context length");
  if (!same_entries(a.inputs, b.inputs) || !same_entries(a.outputs, b.outputs))
    unsupported(s, a, "reads or writes a tensor whose size depends on the context length");
}

}  // namespace

void add_step_growth(StageGraph& one, const StageGraph& next, const StageGraph* last, int steps) {
  if (one.nodes.size() != next.nodes.size() || (last && last->nodes.size() != one.nodes.size()))
    throw FlatUnsupported("stage " + std::to_string(one.stage) +
                          ": its nodes change with the context length");
  for (size_t i = 0; i < one.nodes.size(); ++i) {
    LoweredNode& n = one.nodes[i];
    const LoweredNode& m = next.nodes[i];
    check_same_node(one, n, m);
    StepGrowth& g = n.growth;
    g.num_ops = m.num_ops - n.num_ops;
    g.tensor_size = static_cast<int64_t>(m.tensor_size) - static_cast<int64_t>(n.tensor_size);
    g.y_tensor_size = m.y_tensor_size - n.y_tensor_size;
    g.comm_size = m.comm_size - n.comm_size;
    g.state_bytes_read =
        static_cast<int64_t>(m.state_bytes_read) - static_cast<int64_t>(n.state_bytes_read);
    g.kernel_seconds = m.kernel_seconds - n.kernel_seconds;
    if (m.weight_bytes_read != n.weight_bytes_read)
      unsupported(one, n, "reads weights whose size depends on the context length");
    if (g.any() && !n.per_step) unsupported(one, n, "grows with the context but is no decode step");
    if (!last) continue;
    const LoweredNode& l = last->nodes[i];
    check_same_node(one, n, l);
    const int64_t k = steps - 1;
    // `last` is lowered as a step 0: compare its sizes at step 0 with
    // step k's grown from `one` (the folded copy's work is in both or in
    // neither).
    const int64_t extra_ops = k == 0 ? 0 : n.first_step_num_ops;
    const uint64_t extra_bytes = k == 0 ? 0 : n.first_step_tensor_size;
    if (l.num_ops_at(0) != n.num_ops_at(k) + extra_ops ||
        l.tensor_size_at(0) != n.tensor_size_at(k) + extra_bytes ||
        l.y_tensor_size != n.y_tensor_size_at(k) || l.comm_size != n.comm_size_at(k) ||
        l.state_bytes_read != n.state_bytes_read_at(k))
      unsupported(one, n, "has a size that is not linear in the context length");
  }
}

}  // namespace stg::lower
