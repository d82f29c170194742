// Which kernel a compute op runs, and its sizes, for the kernel model
// (`--compute_time model`, hardware/kernel_model.h, docs/kernel-model.md):
//   * an einsum that contracts a dimension is a matrix product (GEMM): its
//     letters in both inputs and the output are the batch, those of the
//     first input and the output M, of the second input and the output N,
//     the contracted ones K;
//   * a custom kernel with a FLOP count of its own (graph::Tensor::flops:
//     the fused attention kernels) is flash-style attention, forward or
//     backward by its phase;
//   * every other op (element-wise ops and einsums without a contraction,
//     norms, softmax, slices, concatenations, updates, other custom
//     kernels) is memory-bound: its inputs read and its output written.
// Every kernel moves its inputs and its output once.
#pragma once

#include <cstdint>
#include <functional>

#include "stg/graph/tensor.h"
#include "stg/hardware/kernel_model.h"

namespace stg::lower {

struct OpKernel {
  enum class Kind { kGemm, kAttention, kMemoryBound };
  Kind kind = Kind::kMemoryBound;
  int64_t m = 1, n = 1, k = 1, batch = 1;  // kGemm
  // kAttention: the matrix products' FLOPs; kMemoryBound: the op's
  // operations, charged at the GEMM rate when they outlast its bytes.
  double flops = 0;
  double bytes = 0;  // inputs read plus output written
  bool backward = false;
};

// The value of a dimension at the run's sizes.
using DimValue = std::function<double(const expr::Expr&)>;

// The kernel of compute op `t` whose output has shape `y_shape` and whose
// work in the trace is `ops`, with elements of `element_bytes`.
OpKernel kernel_of_op(const graph::Tensor& t, const graph::Shape& y_shape, double ops,
                      int64_t element_bytes, const DimValue& dim);

// Its time under the kernel model, in seconds.
double op_kernel_seconds(const hardware::KernelFigures& f, const OpKernel& kernel,
                         int64_t element_bytes);

}  // namespace stg::lower
