// GPUs as data (`--gpu NAME`; docs/gpus.md): each row is one accelerator's
// vendor datasheet figures, which set the roofline (dense tensor-core peak
// for the trace's element type, HBM bandwidth), the serving memory limit
// (HBM capacity), and ASTRA-sim's two-level network (the scale-up domain's
// GPUs and per-GPU bandwidth, the scale-out bandwidth per GPU). Flags given
// explicitly (--peak_tflops, --mem_bw_gbps, --hbm_gb) still win.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace stg::hardware {

struct Gpu {
  const char* name;       // as given to --gpu
  const char* datasheet;  // the vendor document the figures come from
  // Dense (no structured sparsity) tensor-core peaks in TFLOPS; fp8 0: none.
  double bf16_tflops, fp8_tflops;
  double hbm_gb, hbm_gbps;  // capacity (GB, 1e9 bytes) and bandwidth
  // The scale-up domain (NVLink, Infinity Fabric): GPUs in it and each
  // GPU's bandwidth to it per direction (half the bidirectional figure).
  int scale_up_gpus;
  double scale_up_gbps;
  const char* scale_up;  // its name, e.g. "NVLink 4"
  double scale_out_gbps;  // per GPU, per direction (its NIC)
  // Streaming multiprocessors (compute units on AMD): the waves a matrix
  // product's tiles run in (hardware/kernel_model.h).
  int sms;
};

// Every row, in --help's order.
const std::vector<Gpu>& gpus();
// The row of `name` (case-insensitive), or nullptr.
const Gpu* find_gpu(std::string_view name);
// "h100-sxm, h800, ..." for messages.
std::string gpu_names();

}  // namespace stg::hardware
