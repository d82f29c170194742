// The all-reduce that sums copies of one gradient held on several stages
// (tie-embeddings: a tied weight's two copies; sum-mirrored-gradients:
// DualPipe's two copies of a stage), and the rewiring that makes the
// gradient's readers read the sum.
#pragma once

#include <string>
#include <vector>

#include "stg/graph/graph.h"

namespace stg::passes {

// An all-reduce of gradient tensor `grad` over the comm group `group`, in
// the gradient's place and view: named <grad's name><name_suffix>, labelled
// <grad's id><label_suffix>. The caller sets what it waits for (extra_deps).
graph::Tensor gradient_all_reduce(const graph::Graph& g, int grad, int group,
                                  const std::string& name_suffix, const std::string& label_suffix);

// Every tensor reading a gradient t with sum_of[t] >= 0 reads that sum
// instead (indices as passes::Insertions hands them out, before apply()).
void read_gradient_sums(graph::Graph& g, const std::vector<int>& sum_of);

}  // namespace stg::passes
