// Decode steps written from one (lower/flat_stage.h): a decode-step
// template is lowered at the first step's context length and at one token
// more; the difference is how much each node's sizes grow per step (the
// attention over the KV cache and the cache bytes it reads grow with the
// context, nothing else does). A third lowering at the last step's context
// checks that the sizes are linear in it.
#pragma once

#include "stg/lower/flat_stage.h"
#include "stg/lower/stage_graph.h"

namespace stg::lower {

// Sets each node's StepGrowth in `one` from `next` (the same stage lowered
// at one token more) and checks `last` (lowered `steps` - 1 tokens later
// than `one`; null: not checked). Throws FlatUnsupported when the stages
// differ in more than sizes, when a node of no decode step grows, or when a
// size is not linear in the context length.
void add_step_growth(StageGraph& one, const StageGraph& next, const StageGraph* last, int steps);

}  // namespace stg::lower
