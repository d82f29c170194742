#include "stg/hardware/kernel_model.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "stg/hardware/gpus.h"

namespace stg::hardware {
namespace {

// Sustained fractions and overhead (docs/kernel-model.md names the source
// of each). Fixed before any end-to-end comparison: never fitted to a
// published step time.
constexpr double kGemmFraction = 0.80;                     // cuBLAS / CUTLASS large GEMMs
constexpr double kMemoryFraction = 0.90;                   // streaming copies of HBM
constexpr double kKernelOverheadSeconds = 1e-6;            // back-to-back launches in a stream
constexpr double kFa2Forward = 0.73, kFa2Backward = 0.63;  // FlashAttention-2, A100
constexpr double kFa3Forward = 0.75, kFa3Backward = 0.55;  // FlashAttention-3, H100

// Ampere runs FlashAttention-2 (FlashAttention-3 needs Hopper's TMA and
// warpgroup MMA); the later GPUs take Hopper's figures (docs/kernel-model.md).
bool ampere(const Gpu& gpu) { return std::string_view(gpu.name).rfind("a100", 0) == 0; }

}  // namespace

KernelFigures kernel_figures(const Gpu& gpu, bool fp8) {
  KernelFigures f;
  f.peak_tflops = fp8 ? gpu.fp8_tflops : gpu.bf16_tflops;
  f.hbm_gbps = gpu.hbm_gbps;
  f.sms = gpu.sms;
  f.gemm_fraction = kGemmFraction;
  f.attention_forward_fraction = ampere(gpu) ? kFa2Forward : kFa3Forward;
  f.attention_backward_fraction = ampere(gpu) ? kFa2Backward : kFa3Backward;
  f.memory_fraction = kMemoryFraction;
  f.kernel_overhead_seconds = kKernelOverheadSeconds;
  return f;
}

double memory_bound_seconds(const KernelFigures& f, double bytes) {
  return f.kernel_overhead_seconds + bytes / (f.memory_fraction * f.hbm_gbps * 1e9);
}

double gemm_seconds(const KernelFigures& f, int64_t m, int64_t n, int64_t k, int64_t batch,
                    int64_t element_bytes) {
  const auto tiles_of = [](int64_t size, int64_t tile) { return (size + tile - 1) / tile; };
  const double tiles = static_cast<double>(batch) * static_cast<double>(tiles_of(m, kTileM)) *
                       static_cast<double>(tiles_of(n, kTileN));
  const double waves = std::ceil(tiles / f.sms);
  // One tile per SM at the sustained fraction of the SM's share of the peak.
  const double sm_flops = f.gemm_fraction * f.peak_tflops * 1e12 / f.sms;
  const double wave_seconds = 2.0 * kTileM * kTileN * static_cast<double>(k) / sm_flops;
  const double bytes = static_cast<double>(batch) *
                       (static_cast<double>(m) * static_cast<double>(k) +
                        static_cast<double>(k) * static_cast<double>(n) +
                        static_cast<double>(m) * static_cast<double>(n)) *
                       static_cast<double>(element_bytes);
  return std::max(waves * wave_seconds,
                  memory_bound_seconds(f, bytes) - f.kernel_overhead_seconds) +
         f.kernel_overhead_seconds;
}

double attention_seconds(const KernelFigures& f, double flops, double bytes, bool backward) {
  const double fraction = backward ? f.attention_backward_fraction : f.attention_forward_fraction;
  const double compute = flops / (fraction * f.peak_tflops * 1e12);
  return std::max(compute, memory_bound_seconds(f, bytes) - f.kernel_overhead_seconds) +
         f.kernel_overhead_seconds;
}

uint64_t duration_micros(double seconds) {
  const long long micros = std::llround(seconds * 1e6);
  return micros < 1 ? 1 : static_cast<uint64_t>(micros);
}

}  // namespace stg::hardware
