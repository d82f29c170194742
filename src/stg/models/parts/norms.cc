#include "stg/models/parts/norms.h"

namespace stg::models {

using graph::Graph;

Graph layer_norm(const Layout& l) {
  Graph g;
  g.input("x", l.act);
  g.elementwise("y", "x", 5, l.act);
  g.input("dy", l.act, "y");
  g.elementwise("dx", "dy", 5, l.act, "x");
  g.mark_backward_from(2);
  return g;
}

Graph residual(const Layout& l) {
  Graph g;
  g.input("x1", l.act);
  g.input("x2", l.act);
  g.add_op("y", "x1", "x2", l.act);
  g.input("dy", l.act, "y");
  g.identity("dx1", "dy", l.act, "x1");
  g.identity("dx2", "dy", l.act, "x2");
  g.mark_backward_from(3);
  return g;
}

}  // namespace stg::models
