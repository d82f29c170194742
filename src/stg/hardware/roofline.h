// The roofline of a device (peak compute, memory bandwidth) and the time
// ASTRA-sim's analytical backend gives a compute node in roofline
// mode ("roofline-enabled": 1), so that `stg validate` can flag nodes it
// would run in 0 ns. ASTRA-sim computes, in double precision,
//   perf = min(local_mem_bw * num_ops / tensor_size, peak_perf)   [per s]
//   runtime_ns = truncate(num_ops / perf * 1e9)
// with peak_perf = "peak-perf" TFLOPS and local_mem_bw = "local-mem-bw"
// GB/s from its system configuration. A dependency-free node whose runtime
// truncates to 0 is scheduled at the current time 0, which ASTRA-sim's event
// queue rejects with an assertion (docs/facts.md §6, warning W1).
#pragma once

#include <cstdint>

namespace stg::hardware {

struct RooflineFigures {
  double peak_tflops = 989;   // H100 SXM dense bf16, ASTRA-sim's example system
  double mem_bw_gbps = 3350;  // H100 SXM HBM3
};

// Whole nanoseconds, as ASTRA-sim truncates them. tensor_size must be > 0
// (R5 rejects 0); num_ops == 0 gives 0.
uint64_t roofline_ns(uint64_t num_ops, uint64_t tensor_size, const RooflineFigures& hw);

}  // namespace stg::hardware
