#include "stg/options.h"

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "stg/util/closest.h"
#include "stg/util/ignore_case.h"

namespace stg {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kFp32:
      return "fp32";
    case DType::kBf16:
      return "bf16";
    case DType::kFp16:
      return "fp16";
    case DType::kFp8:
      return "fp8";
  }
  return "?";
}

int64_t dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::kFp32:
      return 4;
    case DType::kBf16:
    case DType::kFp16:
      return 2;
    case DType::kFp8:
      return 1;
  }
  return 2;
}

void check_limits(const Options& o) {
  if (o.threads > kMaxThreads)
    throw UsageError("--threads " + std::to_string(o.threads) + " is too many: use at most " +
                     std::to_string(kMaxThreads) + " (0: one per core)");
  if (o.num_stacks && *o.num_stacks > kMaxStacks)
    throw UsageError("--num_stacks " + std::to_string(*o.num_stacks) +
                     " is too many blocks: use at most " + std::to_string(kMaxStacks));
  std::string flags;
  int64_t ranks = 1;
  bool too_many = false;
  for (int r = 0; r < mesh::kNumAxes; ++r) {
    const int64_t degree = o.degree.row(r);
    if (degree < 1) return;  // refused as not a degree
    if (degree == 1) continue;
    flags += (flags.empty() ? "" : " * ") + std::string(mesh::kAxes[r].flag) + " " +
             std::to_string(degree);
    too_many = too_many || __builtin_mul_overflow(ranks, degree, &ranks) || ranks > kMaxRanks;
  }
  if (too_many)
    throw UsageError(flags + " is more than " + std::to_string(kMaxRanks) +
                     " ranks, the most Chakra traces can number (32-bit ranks): use smaller "
                     "degrees");
}


}  // namespace stg
