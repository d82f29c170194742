// What a model builder hands to the passes: the forward+backward tensor graph
// and how its symbols map to the axes of the device mesh.
#pragma once

#include <string>
#include <vector>

#include "stg/graph/graph.h"
#include "stg/graph/sharding.h"
#include "stg/mesh/mesh.h"

namespace stg::models {

// A mesh axis as the model declares it (a row of mesh/axes.h, made by
// models/model_axes.h); the flags give its degree.
struct ModelAxis {
  std::string name;    // "dp", "tp", "sp", "ep"
  std::string symbol;  // the symbol the model's shapes use for its degree
  mesh::AxisKind kind = mesh::AxisKind::kOther;
};

struct Model {
  graph::Graph graph;
  // Its mesh axes; make_mesh puts them in the rank order of mesh/axes.h.
  std::vector<ModelAxis> axes;
  // Every symbol that stands for a parallel degree in the model's shapes
  // (also those of axes the run does not have).
  std::vector<std::string> degree_symbols;
  graph::ClaimRule claim = graph::ClaimRule::kOneAxisPerDim;
  int num_blocks = 0;  // placement units between the first and last parts
};

}  // namespace stg::models
