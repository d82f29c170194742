// Pipeline stage assignment: blocks go to stages in contiguous, balanced
// runs (earlier stages take the remainder), the first part (input
// embedding) to stage 0 and the last part (output embedding, loss) to the
// last stage. Every input read across stages becomes a link: a SEND on the
// producer's stage and a RECV of a "shadow" on the consumer's.
#pragma once

#include <vector>

#include "stg/graph/graph.h"

namespace stg::passes {

struct CrossStageLink {
  int tensor = 0;      // the producer, in the global graph
  int from_stage = 0;  // producer's stage
  int to_stage = 0;    // consumer's stage
  int tag = 0;         // same on every rank; unique per link
};

struct PipelinePlan {
  int pp = 1;
  int chunks = 1;                           // virtual stages per stage
  std::vector<int> stage_of;                // per tensor
  std::vector<int> chunk_of;                // per tensor: its chunk on its stage
  std::vector<std::vector<int>> members;    // per stage: its tensors, graph order
  std::vector<std::vector<int>> shadows;    // per stage: remote tensors it receives
  std::vector<CrossStageLink> links;        // stage-major, order of first use
};

// Stage of block `block` of `num_blocks` under contiguous balanced placement.
int stage_of_block(int block, int num_blocks, int pp);

// With more stages than blocks (at most two more), the first and the last
// part get stages of their own. With `chunks` > 1 (interleaved schedules) the blocks are split into
// pp*chunks contiguous virtual stages, assigned round-robin: chunk c of
// stage s holds virtual stage c*pp + s.
PipelinePlan assign_stages(const graph::Graph& g, int pp, int num_blocks, int chunks = 1);

}  // namespace stg::passes
