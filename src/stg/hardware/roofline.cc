#include "stg/hardware/roofline.h"

#include <algorithm>

namespace stg::hardware {

uint64_t roofline_ns(uint64_t num_ops, uint64_t tensor_size, const RooflineFigures& hw) {
  if (num_ops == 0 || tensor_size == 0) return 0;
  const double ops = static_cast<double>(num_ops);
  const double intensity = ops / static_cast<double>(tensor_size);
  const double perf = std::min(hw.mem_bw_gbps * 1e9 * intensity, hw.peak_tflops * 1e12);
  return static_cast<uint64_t>(ops / perf * 1e9);
}

}  // namespace stg::hardware
