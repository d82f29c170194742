// Compute time from a kernel model (`--compute_time model`;
// docs/kernel-model.md): how long one GPU kernel runs, from how GPUs run
// them rather than from a curve fitted to step times.
//   * A matrix product (GEMM) is cut into output tiles of kTileM x kTileN;
//     the tiles run in waves of one tile per SM, so a product whose tile
//     count is not a multiple of the SM count pays for a whole last wave.
//     Each tile runs at the sustained fraction of the tensor-core peak that
//     cuBLAS / CUTLASS reach on large products.
//   * Flash-style attention (one fused kernel) runs at its own sustained
//     fraction of the peak, forward and backward apart (FlashAttention-2 on
//     A100, FlashAttention-3 on H100).
//   * Memory-bound kernels (norms, element-wise ops, softmax outside a
//     flash kernel, optimizer updates, embedding lookups) move their bytes
//     at a sustained fraction of HBM bandwidth.
// Every kernel is bounded below by its bytes at that bandwidth and pays a
// fixed per-kernel overhead. The constants are fixed from published kernel
// benchmarks (docs/kernel-model.md cites each) and never fitted to
// end-to-end step times. Pure functions of the figures: no graph types.
#pragma once

#include <cstdint>

namespace stg::hardware {

struct Gpu;

// The figures a kernel's time depends on.
struct KernelFigures {
  double peak_tflops = 0;  // dense tensor-core peak for the element type
  double hbm_gbps = 0;     // HBM bandwidth (GB/s, 1e9 bytes)
  int sms = 0;             // streaming multiprocessors (compute units)
  // Sustained fractions (docs/kernel-model.md).
  double gemm_fraction = 0;
  double attention_forward_fraction = 0;
  double attention_backward_fraction = 0;
  double memory_fraction = 0;
  double kernel_overhead_seconds = 0;  // per kernel, launch to launch
};

// The output tile of one thread block (CUTLASS's default 128 x 128).
inline constexpr int64_t kTileM = 128;
inline constexpr int64_t kTileN = 128;

// The figures of `gpu` for elements of `fp8` (the FP8 peak) or not (the
// BF16/FP16 peak), with the constants of its architecture.
KernelFigures kernel_figures(const Gpu& gpu, bool fp8);

// A batch of `batch` products of (m x k) by (k x n), elements of
// `element_bytes`: max(waves x a tile's time, bytes / bandwidth) plus the
// overhead, in seconds.
double gemm_seconds(const KernelFigures& f, int64_t m, int64_t n, int64_t k, int64_t batch,
                    int64_t element_bytes);

// A fused attention kernel of `flops` (its matrix products' FLOPs) moving
// `bytes` (Q, K, V, O and their gradients backward).
double attention_seconds(const KernelFigures& f, double flops, double bytes, bool backward);

// A memory-bound kernel moving `bytes` (read plus written).
double memory_bound_seconds(const KernelFigures& f, double bytes);

// A trace's duration_micros for `seconds`: whole microseconds, the nearest,
// at least 1 (ASTRA-sim replays a duration of 0 as 1 ns).
uint64_t duration_micros(double seconds);

}  // namespace stg::hardware
