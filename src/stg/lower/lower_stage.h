// Lowering of one pipeline stage: each tensor becomes a compute node plus
// the collectives its inputs need; cross-stage links become SEND/RECV nodes.
// All ranks of the stage share the result (they differ only in group ids
// and peers, see RankBinding).
#pragma once

#include <vector>

#include "stg/graph/graph.h"
#include "stg/lower/io_info.h"
#include "stg/lower/schedule.h"
#include "stg/lower/sharding.h"
#include "stg/lower/stage_graph.h"
#include "stg/lower/values.h"
#include "stg/passes/pipeline.h"

namespace stg::lower {

struct LowerOptions {
  std::vector<AxisSymbol> active_axes;  // axes of degree > 1, in group order
  ClaimRule claim_rule = ClaimRule::kOneAxisPerDim;
  IoPolicy io;
  // Units written into the trace. The reference's (default): sizes are
  // element counts and einsum work is multiply-accumulates. Physical: sizes
  // in bytes (elements x bytes_per_element) and einsum work in FLOPs (2 per
  // multiply-accumulate); other ops count their element operations either way.
  int64_t bytes_per_element = 1;
  int64_t flops_per_mac = 1;
  // Physical units: custom kernels with a FLOP count (Tensor::flops) write it.
  bool kernel_flops = false;
  // Pipeline schedule enforced with ctrl_deps (kNone: order left to the
  // simulator, as the reference does).
  Schedule schedule = Schedule::kNone;
  int micro_batches = 1;
};

StageGraph lower_stage(const graph::Graph& g, const passes::PipelinePlan& plan, int stage,
                       const Values& values, const LowerOptions& options);

}  // namespace stg::lower
