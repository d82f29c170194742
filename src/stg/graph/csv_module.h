// Module graphs read from the reference's CSV "sharding spreadsheet": one
// tensor a row under the header
//   id,require_grads,x1,x2,op_type,op_attr,x1_shape,x1_hidden,x2_shape,
//   x2_hidden,grad_of[,extra_attr]
// so that users keep the spreadsheets they wrote for the Python reference.
//
// Every error is a GraphError naming the source, the 1-based row (the header
// is row 1) and the column: "model.csv row 7, column x1_shape: ...".
#pragma once

#include <string>
#include <string_view>

#include "stg/graph/graph.h"

namespace stg::graph {

// Reads and validates the spreadsheet at `path` (errors name `path`).
Graph read_module_csv(const std::string& path);

// Parses spreadsheet text; errors name `source_name` as the file.
Graph parse_module_csv(std::string_view text, const std::string& source_name);

}  // namespace stg::graph
