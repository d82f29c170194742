#include "stg/graph/csv_records.h"

#include <cctype>

#include "stg/graph/op.h"

namespace stg::graph::csv {

[[noreturn]] void fail(const Where& at, const std::string& why) {
  std::string msg = *at.source + " row " + std::to_string(at.row);
  if (!at.column.empty()) msg += ", column " + at.column;
  throw GraphError(msg + ": " + why);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// A small RFC 4180 reader written here: Debian's libcsv-dev (a C library,
// not installed on our machines) would add a build and CI dependency for
// these few lines, and libfccp-dev cannot read quoted fields spanning lines.
// Handles quoted fields (commas, doubled quotes and newlines inside; blanks
// around the quotes, as hand-edited sheets have, are dropped), CRLF, CR or LF
// line ends and a leading UTF-8 byte-order mark.

std::vector<Record> read_records(std::string_view text, const std::string& source) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::vector<Record> records;
  const size_t n = text.size();
  size_t i = 0;
  int row = 0;
  auto is_end = [](char c) { return c == ',' || c == '\n' || c == '\r'; };
  while (i < n) {
    Record rec{++row, {}};
    for (;;) {
      std::string field;
      size_t quote = i;  // blanks before an opening quote are dropped
      while (quote < n && (text[quote] == ' ' || text[quote] == '\t')) ++quote;
      if (quote < n && text[quote] == '"') {
        i = quote + 1;
        for (;;) {
          if (i >= n)
            fail({&source, rec.row, std::to_string(rec.fields.size() + 1)},
                 "unterminated quoted field");
          const char c = text[i++];
          if (c != '"') {
            field += c;
          } else if (i < n && text[i] == '"') {
            field += '"';
            ++i;
          } else {
            break;
          }
        }
        while (i < n && (text[i] == ' ' || text[i] == '\t')) ++i;
        if (i < n && !is_end(text[i]))
          fail({&source, rec.row, std::to_string(rec.fields.size() + 1)},
               "unexpected character '" + std::string(1, text[i]) +
                   "' after the closing quote of a quoted field");
      } else {
        while (i < n && !is_end(text[i])) field += text[i++];
      }
      rec.fields.push_back(std::move(field));
      if (i >= n) break;
      if (text[i] == ',') {
        ++i;
        continue;
      }
      i += (text[i] == '\r' && i + 1 < n && text[i + 1] == '\n') ? 2 : 1;  // line end
      break;
    }
    records.push_back(std::move(rec));
  }
  return records;
}

}  // namespace stg::graph::csv
