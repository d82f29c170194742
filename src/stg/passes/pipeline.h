// Pipeline stage assignment (docs/facts.md §7): blocks go to stages in
// contiguous, balanced runs (earlier stages take the remainder), the first
// part (input embedding) to stage 0 and the last part (output embedding,
// loss), with the blocks numbered from `num_blocks` on (multi-token
// prediction's), to the last stage. Sets Tensor::stage and Tensor::chunk; the edges
// that cross stages become send/recv pairs in insert_send_recv.
#pragma once

#include <vector>

#include "stg/passes/pass.h"

namespace stg::passes {

// Whether a tensor goes with the last part: the last part's, and the blocks
// numbered from `num_blocks` on (multi-token prediction's, which follow the
// output layer).
bool placed_with_last(const graph::Placement& p, int num_blocks);

// Stage of block `block` of `num_blocks` under contiguous balanced placement.
int stage_of_block(int block, int num_blocks, int pp);

// The virtual stage of part `part` of the model by count: part 0 is the
// first part (the embedding), 1 .. num_blocks the blocks, num_blocks + 1
// the last part. The ends go with the first and the last block, or, with
// more virtual stages than blocks, are units of their own.
int virtual_stage_of_part(int part, int num_blocks, int virtual_stages);

// With more stages than blocks (at most two more), the first and the last
// part get stages of their own. With `chunks` > 1 (interleaved schedules)
// the blocks are split into pp*chunks contiguous virtual stages, assigned
// round-robin: chunk c of stage s holds virtual stage c*pp + s; `v_shape`
// (DualPipeV, two chunks): chunk 0 of stage s holds virtual stage s and
// chunk 1 virtual stage 2pp-1-s.
// With `cost_values` (--pp_balance cost) the units are split into
// contiguous runs by their work (FLOPs, or operation counts, evaluated with
// these values) so that the most costly stage costs least, instead of by
// count; the first and last parts count with the first and last block.
// A tensor of serving pool k (Placement::pool) goes to stage k * pp + its
// stage in the plan.
void assign_stages(graph::Graph& g, int pp, int num_blocks, int chunks = 1, bool v_shape = false,
                   const expr::Values* cost_values = nullptr);

// The stage of each of `cost.size()` units in `stages` contiguous non-empty
// runs whose largest sum of costs is the least possible.
std::vector<int> stages_by_cost(const std::vector<double>& cost, int stages);

// Over the stages of the analyses' mesh, which owns the pipeline degree:
// `pools` pools of stages (serving with disaggregated pools), each of the
// plan's pipeline stages.
class AssignStages : public Pass {
 public:
  AssignStages(int num_blocks, int chunks, bool v_shape = false, bool by_cost = false,
               int pools = 1)
      : blocks_(num_blocks), chunks_(chunks), v_shape_(v_shape), by_cost_(by_cost), pools_(pools) {}
  std::string_view name() const override { return "assign-stages"; }
  void run(graph::Graph& g, Analyses& a) override {
    assign_stages(g, static_cast<int>(a.mesh().stages()) / pools_, blocks_, chunks_, v_shape_,
                  by_cost_ ? &a.values() : nullptr);
  }

 private:
  int blocks_, chunks_;
  bool v_shape_, by_cost_;
  int pools_;
};

}  // namespace stg::passes
