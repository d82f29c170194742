// The whole pipeline: model -> passes -> per-stage lowering -> per-rank
// traces and the comm-group file.
#pragma once

#include <cstdint>
#include <string>

#include "stg/options.h"

namespace stg {

struct RunSummary {
  int64_t ranks = 0;
  int64_t files = 0;
  int64_t bytes = 0;
  int64_t nodes = 0;
  std::string comm_group_path;
  std::string memory_report;  // with --print_gpu_vram: one line per stage
};

// Checks the options and generates everything. Throws UsageError on bad
// input before any file is written; on a write failure removes what it wrote.
RunSummary generate(const Options& options);

}  // namespace stg
