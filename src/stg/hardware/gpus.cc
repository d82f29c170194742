#include "stg/hardware/gpus.h"

#include <algorithm>
#include <cctype>

namespace stg::hardware {

// Dense figures: the datasheets print tensor-core peaks with 2:4 structured
// sparsity, twice these. Scale-out: one 400 Gb/s NIC (ConnectX-7 or a 400G
// Ethernet NIC) per GPU in the reference systems (DGX/HGX H100, H200, B200,
// the MI300X platform; DeepSeek-V3's H800 cluster), 200 Gb/s HDR per GPU in
// the DGX A100. SMs: the architecture whitepapers (H100, H800 and H200: 132
// of GH100's 144 in the SXM part; A100: 108; MI300X: 304 CUs, AMD CDNA 3
// whitepaper); B200: 148, as CUDA's device properties report it.
const std::vector<Gpu>& gpus() {
  static const std::vector<Gpu> rows = {
      {"h100-sxm", "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM)", 989.4, 1978.9, 80, 3350, 8,
       450, "NVLink 4 (900 GB/s)", 50, 132},
      {"h800", "NVIDIA H800 Tensor Core GPU datasheet (H800 SXM)", 989.4, 1978.9, 80, 3350, 8, 200,
       "NVLink (400 GB/s)", 50, 132},
      {"h200", "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM)", 989.4, 1978.9, 141, 4800, 8, 450,
       "NVLink 4 (900 GB/s)", 50, 132},
      {"a100-80gb", "NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM)", 312, 0, 80, 2039, 8,
       300, "NVLink 3 (600 GB/s)", 25, 108},
      {"b200", "NVIDIA HGX B200 specifications (per GPU of 8)", 2250, 4500, 180, 8000, 8, 900,
       "NVLink 5 (1.8 TB/s)", 50, 148},
      {"mi300x", "AMD Instinct MI300X accelerator datasheet", 1307.4, 2614.9, 192, 5300, 8, 448,
       "Infinity Fabric (7 links x 128 GB/s)", 50, 304},
  };
  return rows;
}

const Gpu* find_gpu(std::string_view name) {
  // Case-insensitive (util/ is a layer of its own, beside this one).
  const auto same = [&](std::string_view row) {
    return row.size() == name.size() &&
           std::equal(row.begin(), row.end(), name.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) ==
                    std::tolower(static_cast<unsigned char>(b));
           });
  };
  for (const Gpu& g : gpus())
    if (same(g.name)) return &g;
  return nullptr;
}

std::string gpu_names() {
  std::string out;
  for (const Gpu& g : gpus()) out += (out.empty() ? "" : ", ") + std::string(g.name);
  return out;
}

}  // namespace stg::hardware
