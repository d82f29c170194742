// A model read from one module spreadsheet (graph/csv_module.h): the module
// alone, all of it in block 0, so it runs on one pipeline stage.
#pragma once

#include <set>
#include <string>

#include "stg/models/model.h"

namespace stg::models {

// The module at `path` as a model: its graph (every tensor in block 0,
// num_blocks = 1) and the axes of mesh/axes.h: every common axis with its
// later symbol when the sheet uses it, else the seed's (sp -> "cp" or "sp"),
// and an opt-in axis (ep) only when the sheet uses its symbol.
// Throws graph::GraphError naming the file, row and column of a bad row.
Model build_csv_model(const std::string& path);

// Every free symbol of the model's shapes, hidden views and op attributes
// (dims such as "Batch" as well as axis symbols such as "dp"), so a caller
// can bind them and refuse the ones it does not know.
std::set<std::string> csv_model_symbols(const Model& model);

}  // namespace stg::models
