// The GPU and network a plan's step time is predicted on (plan_time.h): the
// machine `--astra_sim` describes for the run's options (--gpu's row of
// hardware/gpus.h, or its H100-like defaults; emit/astra_sim_inputs.h), so
// that the prediction and the replay of the traces charge the same links;
// compute at the kernel model's sustained fraction of the peak for matrix
// products (hardware/kernel_model.h; docs/kernel-model.md cites it).
#pragma once

#include "stg/options.h"
#include "stg/sweep/plan_time.h"

namespace stg::sweep {

ComputeFigures compute_figures(const Options& o);
NetworkFigures network_figures(const Options& o);

}  // namespace stg::sweep
