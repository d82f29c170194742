// The `inputs`/`outputs` entries of a node: tensor id + shape text, and a
// size for memory accounting as the later reference computes it.
#pragma once

#include <string>
#include <unordered_map>

#include "stg/expr/values.h"
#include "stg/graph/graph.h"
#include "stg/lower/stage_graph.h"

namespace stg::lower {

using expr::SizeError;
using expr::Values;
using expr::whole_count;

struct IoPolicy {
  // Reference accounting with --mixed_precision: weights 6 bytes per element
  // plus Adam state, activations 2 bytes; otherwise element counts.
  bool mixed_precision = false;
};

// Printed expressions by identity (valid while the graph lives).
using StrCache = std::unordered_map<const void*, std::string>;

// `shadow` names the received copy of a tensor produced on another stage.
TensorInfo io_info(const graph::Graph& g, int tensor, bool shadow, const Values& values,
                   const IoPolicy& policy, StrCache* strings = nullptr);

// A number printed as Python prints a float: "1048576.0", "1e+16".
std::string python_float(double value);

}  // namespace stg::lower
