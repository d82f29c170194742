#include "stg/models/parts/context_parallel.h"

#include "stg/passes/insert_axis_send_recv.h"
#include "stg/passes/pass.h"

namespace stg::models {

void add_kernel_passes(passes::PassManager& pm, const ContextParallel& cp) {
  if (cp.algo == CpAlgo::kRing && cp.degree > 1) pm.emplace<passes::InsertAxisSendRecv>();
}

}  // namespace stg::models
