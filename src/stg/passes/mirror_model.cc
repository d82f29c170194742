#include "stg/passes/mirror_model.h"

#include <string>

#include "stg/passes/insertion.h"

namespace stg::passes {

void mirror_model(graph::Graph& g, int pp) {
  const int n = static_cast<int>(g.size());
  const std::string prefix = "mirror.";
  Insertions ins(g);
  std::vector<int> copy(n, -1);
  for (int i = 0; i < n; ++i) {
    graph::Tensor t = g[i];
    if (t.stage < 0 || t.stage >= pp)
      throw graph::GraphError("mirror-model: " + t.id() + " is on no stage of the run");
    t.name = prefix + t.name;
    t.number_at = graph::number_after(t.number_at, prefix.size());
    if (!t.comm.label.empty()) {
      t.comm.label = prefix + t.comm.label;
      t.comm.label_number_at = graph::number_after(t.comm.label_number_at, prefix.size());
    }
    t.stage = pp - 1 - t.stage;
    t.chunk = 1;
    copy[i] = ins.after(i, std::move(t), g.shared_result(i));
  }
  // The copies read the copies (indices are valid until apply()).
  for (int i = 0; i < n; ++i) {
    const int c = copy[i];
    const graph::Tensor& t = g[c];
    if (t.x1 >= 0) g.set_input(c, 1, copy[t.x1]);
    if (t.x2 >= 0) g.set_input(c, 2, copy[t.x2]);
    for (size_t k = 0; k < t.extra_deps.size(); ++k) g.set_extra_dep(c, k, copy[t.extra_deps[k]]);
    if (t.grad_of >= 0) g.mutable_tensor_keep_result(c).grad_of = copy[t.grad_of];
  }
  ins.apply();
}

}  // namespace stg::passes
