#include "stg/sweep/machine.h"

#include "stg/emit/astra_sim_inputs.h"
#include "stg/hardware/gpus.h"
#include "stg/hardware/kernel_model.h"

namespace stg::sweep {

ComputeFigures compute_figures(const Options& o) {
  // The plans know FLOPs, not kernels: all of them at the sustained
  // fraction of a large matrix product (without --gpu, the H100's).
  const hardware::Gpu& gpu = o.gpu ? *o.gpu : *hardware::find_gpu("h100-sxm");
  const double fraction = hardware::kernel_figures(gpu, o.dtype == DType::kFp8).gemm_fraction;
  return {emit::machine_of(o).peak_tflops * 1e12, fraction};
}

NetworkFigures network_figures(const Options& o) {
  const emit::AstraSimMachine m = emit::machine_of(o);
  NetworkFigures n;
  n.scale_up_gpus = m.gpus_per_node;
  n.scale_up_gbps = m.intra_node_gbps;
  n.scale_out_gbps = m.inter_node_gbps;
  n.link_latency_ns = m.latency_ns;
  n.endpoint_delay_ns = static_cast<double>(m.endpoint_delay_ns);
  n.hbm_gbps = m.hbm_gbps;
  n.chunks = m.dataset_splits;
  n.active_chunks = m.active_chunks;
  return n;
}

}  // namespace stg::sweep
