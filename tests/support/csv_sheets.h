// Module spreadsheets in tests: the example sheets' folder, the header, and
// parsing inline sheet text (errors name the file "t.csv").
#pragma once

#include <string>
#include <string_view>

#include "stg/graph/csv_module.h"

namespace stg::test {

inline const std::string kCsvData = std::string(STG_TEST_DATA) + "/csv/";

inline constexpr const char* kCsvHeader =
    "id,require_grads,x1,x2,op_type,op_attr,x1_shape,x1_hidden,x2_shape,x2_hidden,grad_of,"
    "extra_attr\n";

inline graph::Graph parse_sheet(std::string_view text) {
  return graph::parse_module_csv(text, "t.csv");
}

// The message of the error parsing `text` raises, or "(no error)".
inline std::string sheet_error(std::string_view text) {
  try {
    parse_sheet(text);
  } catch (const graph::GraphError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace stg::test
