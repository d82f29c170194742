// Inserting tensors at chosen places of a graph. New tensors are appended
// at once (so their indices are valid for the edits that follow) and moved
// to their places by one permutation at the end: the graph's order is the
// order lowering numbers nodes in.
#pragma once

#include <memory>
#include <vector>

#include "stg/graph/graph.h"

namespace stg::passes {

class Insertions {
 public:
  explicit Insertions(graph::Graph& g);

  // Adds `t` and returns its index (valid until apply()). After apply() it
  // sits right before `anchor` (after earlier insertions before `anchor`),
  // or right after it (after earlier insertions after `anchor`).
  int before(int anchor, graph::Tensor t);
  int after(int anchor, graph::Tensor t);
  // A copy of a tensor with the same op and views, whose op result is known.
  int after(int anchor, graph::Tensor t, std::shared_ptr<const graph::OpResult> known);

  // Moves the inserted tensors into place; indices change.
  void apply();

 private:
  graph::Graph& g_;
  size_t original_;
  std::vector<std::vector<int>> before_, after_;  // by anchor
};

}  // namespace stg::passes
