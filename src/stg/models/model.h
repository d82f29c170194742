// What a model builder hands to the passes: the forward+backward tensor graph
// and how its symbols map to parallel axes.
#pragma once

#include <string>
#include <vector>

#include "stg/graph/graph.h"
#include "stg/lower/sharding.h"

namespace stg::models {

struct Model {
  graph::Graph graph;
  // The symbol that stands for each spatial axis in this model's shapes, in
  // group order (dp, tp, sp/cp[, ep]).
  std::vector<lower::AxisSymbol> axes;
  int num_blocks = 0;  // placement units between the first and last parts
};

}  // namespace stg::models
