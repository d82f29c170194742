#include "stg/lower/kernel_of_op.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace stg::lower {
namespace {

double elements(const graph::Shape& shape, const DimValue& dim) {
  double n = 1;
  for (const expr::Expr& d : shape) n *= dim(d);
  return n;
}

int64_t whole(double v) { return std::max<int64_t>(1, std::llround(v)); }

// M, N, K and the batch of einsum "ab,bc->ac" over the shapes it reads.
bool gemm_dims(const graph::Tensor& t, const DimValue& dim, OpKernel& out) {
  const std::string& spec = t.einsum;
  const auto comma = spec.find(',');
  const auto arrow = spec.find("->");
  if (comma == std::string::npos || arrow == std::string::npos) return false;
  const std::string a = spec.substr(0, comma);
  const std::string b = spec.substr(comma + 1, arrow - comma - 1);
  const std::string y = spec.substr(arrow + 2);
  double m = 1, n = 1, k = 1, batch = 1;
  bool contracts = false;
  for (size_t i = 0; i < a.size(); ++i) {
    const double v = dim((*t.x1_shape)[i]);
    const bool in_b = b.find(a[i]) != std::string::npos;
    const bool in_y = y.find(a[i]) != std::string::npos;
    if (in_b && in_y) batch *= v;
    if (!in_b && in_y) m *= v;
    if (!in_y) {
      k *= v;
      contracts = true;
    }
  }
  for (size_t i = 0; i < b.size(); ++i)
    if (a.find(b[i]) == std::string::npos && y.find(b[i]) != std::string::npos)
      n *= dim((*t.x2_shape)[i]);
  if (!contracts) return false;
  out.m = whole(m);
  out.n = whole(n);
  out.k = whole(k);
  out.batch = whole(batch);
  return true;
}

}  // namespace

OpKernel kernel_of_op(const graph::Tensor& t, const graph::Shape& y_shape, double ops,
                      int64_t element_bytes, const DimValue& dim) {
  OpKernel out;
  out.backward = t.is_backward();
  double elems = elements(y_shape, dim);
  if (t.x1 >= 0 && t.x1_shape) elems += elements(*t.x1_shape, dim);
  if (t.x2 >= 0 && t.x2_shape) elems += elements(*t.x2_shape, dim);
  out.bytes = elems * static_cast<double>(element_bytes);
  out.flops = ops;
  if (t.op == graph::Op::kEinsum && t.x1_shape && t.x2_shape && gemm_dims(t, dim, out))
    out.kind = OpKernel::Kind::kGemm;
  else if (t.op == graph::Op::kCustom && !t.flops.is_zero())
    out.kind = OpKernel::Kind::kAttention;
  return out;
}

double op_kernel_seconds(const hardware::KernelFigures& f, const OpKernel& kernel,
                         int64_t element_bytes) {
  switch (kernel.kind) {
    case OpKernel::Kind::kGemm:
      return hardware::gemm_seconds(f, kernel.m, kernel.n, kernel.k, kernel.batch, element_bytes);
    case OpKernel::Kind::kAttention:
      return hardware::attention_seconds(f, kernel.flops, kernel.bytes, kernel.backward);
    case OpKernel::Kind::kMemoryBound:
      break;
  }
  const double compute = kernel.flops / (f.gemm_fraction * f.peak_tflops * 1e12);
  return std::max(hardware::memory_bound_seconds(f, kernel.bytes),
                  compute + f.kernel_overhead_seconds);
}

}  // namespace stg::lower
