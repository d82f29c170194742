// The records of a module spreadsheet (csv_module.h): a small RFC 4180
// reader, and where an error is.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace stg::graph::csv {

// Where an error is: every message names the source, the 1-based row (the
// header is row 1) and the column.
struct Where {
  const std::string* source;
  int row;
  std::string column;  // empty: the whole row
};

// Throws GraphError "SOURCE row R, column C: why".
[[noreturn]] void fail(const Where& at, const std::string& why);

// `s` without leading and trailing white space.
std::string_view trim(std::string_view s);

struct Record {
  int row;  // 1-based record number (a spreadsheet's row)
  std::vector<std::string> fields;
};

// The records of `text`; errors name `source`.
std::vector<Record> read_records(std::string_view text, const std::string& source);

}  // namespace stg::graph::csv
