// libFuzzer target: stg::graph::parse_module_csv (the reference's sharding
// spreadsheet) on arbitrary text. GraphError is the documented answer to bad
// input; any other exception, a crash or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stg/graph/csv_module.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 16384) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const stg::graph::Graph g = stg::graph::parse_module_csv(text, "fuzz.csv");
    (void)g;
  } catch (const stg::graph::GraphError&) {
  }
  return 0;
}
