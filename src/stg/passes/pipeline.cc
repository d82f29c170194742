#include "stg/passes/pipeline.h"

namespace stg::passes {

int stage_of_block(int block, int num_blocks, int pp) {
  const int base = num_blocks / pp;
  const int extra = num_blocks % pp;  // the first `extra` stages hold base + 1
  const int big = extra * (base + 1);
  return block < big ? block / (base + 1) : extra + (block - big) / base;
}

void assign_stages(graph::Graph& g, int pp, int num_blocks, int chunks, bool v_shape) {
  using Kind = graph::Placement::Kind;
  // More stages than blocks: the first and last parts become pipeline units
  // of their own (in, blocks..., out), split contiguously like blocks.
  const bool own_ends = pp * chunks > num_blocks;
  const int units = own_ends ? num_blocks + 2 : num_blocks;
  for (size_t i = 0; i < g.size(); ++i) {
    const graph::Placement& p = g[static_cast<int>(i)].placement;
    const int unit = own_ends ? (p.kind == Kind::kFirst  ? 0
                                 : p.kind == Kind::kLast ? num_blocks + 1
                                                         : p.block + 1)
                              : p.block;
    const int virtual_stage = !own_ends && p.kind == Kind::kFirst ? 0
                              : !own_ends && p.kind == Kind::kLast
                                  ? pp * chunks - 1
                                  : stage_of_block(unit, units, pp * chunks);
    // Placement does not enter an op's result: the cached result stays.
    graph::Tensor& t = g.mutable_tensor_keep_result(static_cast<int>(i));
    const bool up = v_shape && virtual_stage >= pp;  // the V's second arm
    t.stage = up ? 2 * pp - 1 - virtual_stage : virtual_stage % pp;
    t.chunk = virtual_stage / pp;
  }
}

}  // namespace stg::passes
