// Decode-only serving (`stg infer --prefill 0`) starts each micro-batch
// with a copy of the prompts' last tokens on the stage that samples tokens
// (models/inference_decoder.h): 1 operation and a few bytes per request,
// with no dependency, so ASTRA-sim's analytical backend runs it in 0 ns at
// time 0 and aborts (docs/facts.md §6, warning W1). Such a copy is folded
// into the next compute node of its micro-batch (decode step 0's): that
// node does its operations and moves its bytes in step 0, so every rank's
// FLOPs and bytes stay the same; the copy's readers lose it in step 0 and,
// from step 1 on, read the previous step's successor of it (the token
// sampled before them), as they did.
#pragma once

#include <vector>

#include "stg/lower/stage_graph.h"
#include "stg/hardware/roofline.h"

namespace stg::lower {

// `nodes` in creation order, dependencies as indices; `removed`: nodes
// already dropped (no work), `token_copy`: nodes of a token that the next
// decode step reads and that belong to no decode step. Folds each such
// compute node without dependencies whose roofline time at `hw` is 0 ns
// and marks it removed. A copy with no later compute node of its
// micro-batch is kept.
void fold_token_copies(std::vector<LoweredNode>& nodes, std::vector<bool>& removed,
                       const std::vector<bool>& token_copy, const hardware::RooflineFigures& hw);

}  // namespace stg::lower
