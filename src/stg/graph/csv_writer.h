// Writes a graph as a module spreadsheet (graph/csv_module.h) that
// parse_module_csv reads back into the same graph: same tensors in the same
// order, ids, inputs, ops and op attributes, views, gradient links, data
// dependencies, and in extra_attr the fields the reference's columns lack
// wherever they differ from what the reader infers (so a graph read from a
// reference-style sheet is written as one). For dumping the graph after a
// pass, to inspect or edit it and feed it back with --module_csv.
#pragma once

#include <string>

#include "stg/graph/graph.h"

namespace stg::graph {

// The spreadsheet text: the 12-column header, then one row per tensor;
// shapes printed by shape_str, ids "name" for revision 0 else "name@rev".
std::string write_module_csv(const Graph& g);

}  // namespace stg::graph
