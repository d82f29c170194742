#include "stg/passes/gradient_sum.h"

namespace stg::passes {

graph::Tensor gradient_all_reduce(const graph::Graph& g, int grad, int group,
                                  const std::string& name_suffix, const std::string& label_suffix) {
  const graph::Tensor& x = g[grad];
  const graph::OpResult& r = g.result(grad);
  graph::Tensor t;
  t.op = graph::Op::kCollective;
  t.name = x.name + name_suffix;
  t.number_at = x.number_at;
  t.revision = x.revision;
  t.x1 = grad;
  t.x1_shape = t.x2_shape = r.y_shape;  // the sum has the copy's view
  t.x1_hidden = t.x2_hidden = r.y_hidden;
  t.comm.type = graph::CollType::kAllReduce;
  t.comm.axis = group;
  t.comm.label = x.id() + label_suffix;
  t.comm.label_number_at = x.number_at;
  t.micro_batch = x.micro_batch;
  t.phase = graph::Phase::kBackwardInput;
  t.placement = x.placement;
  t.stage = x.stage;
  t.chunk = x.chunk;
  t.role = graph::Role::kGradient;
  t.element_bytes = x.element_bytes;
  return t;
}

void read_gradient_sums(graph::Graph& g, const std::vector<int>& sum_of) {
  const int n = static_cast<int>(sum_of.size());
  for (int i = 0; i < n; ++i) {
    if (g[i].x1 >= 0 && sum_of[g[i].x1] >= 0) g.set_input(i, 1, sum_of[g[i].x1]);
    if (g[i].x2 >= 0 && sum_of[g[i].x2] >= 0) g.set_input(i, 2, sum_of[g[i].x2]);
  }
}

}  // namespace stg::passes
