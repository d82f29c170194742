#include "stg/models/parts/norms.h"

namespace stg::models {

using graph::Graph;

Graph layer_norm(const Layout& l) {
  using namespace typed;
  Graph g;
  input(g, "x", l.shape);
  elementwise(g, "y", "x", 5, l.shape);
  input(g, "dy", l.shape, "y");
  elementwise(g, "dx", "dy", 5, l.shape, "x");
  g.mark_backward_from(2);
  return g;
}

Graph residual(const Layout& l) {
  using namespace typed;
  Graph g;
  input(g, "x1", l.shape);
  input(g, "x2", l.shape);
  add_op(g, "y", "x1", "x2", l.shape);
  input(g, "dy", l.shape, "y");
  identity(g, "dx1", "dy", l.shape, "x1");
  identity(g, "dx2", "dy", l.shape, "x2");
  g.mark_backward_from(3);
  return g;
}

}  // namespace stg::models
