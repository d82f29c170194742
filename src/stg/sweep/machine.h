// The GPU and network a plan's step time is predicted on (plan_time.h): the
// machine `--astra_sim` describes for the run's options (--gpu's row of
// hardware/gpus.h, or its H100-like defaults; emit/astra_sim_inputs.h), so
// that the prediction and the replay of the traces charge the same links.
#pragma once

#include "stg/options.h"
#include "stg/sweep/plan_time.h"

namespace stg::sweep {

// Sustained fraction of the dense peak that compute runs at until a kernel
// model replaces compute_seconds: a placeholder, the middle of the 70-80%
// that cuBLAS sustains on large BF16 matrix products (issue 32; NVIDIA's
// H100 cuBLAS figures). Not fitted to any step time.
inline constexpr double kPlaceholderEfficiency = 0.75;

ComputeFigures compute_figures(const Options& o);
NetworkFigures network_figures(const Options& o);

}  // namespace stg::sweep
