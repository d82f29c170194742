// Pipeline stage assignment (docs/facts.md §7): blocks go to stages in
// contiguous, balanced runs (earlier stages take the remainder), the first
// part (input embedding) to stage 0 and the last part (output embedding,
// loss) to the last stage. Sets Tensor::stage and Tensor::chunk; the edges
// that cross stages become send/recv pairs in insert_send_recv.
#pragma once

#include "stg/passes/pass.h"

namespace stg::passes {

// Stage of block `block` of `num_blocks` under contiguous balanced placement.
int stage_of_block(int block, int num_blocks, int pp);

// With more stages than blocks (at most two more), the first and the last
// part get stages of their own. With `chunks` > 1 (interleaved schedules)
// the blocks are split into pp*chunks contiguous virtual stages, assigned
// round-robin: chunk c of stage s holds virtual stage c*pp + s; `v_shape`
// (DualPipeV, two chunks): chunk 0 of stage s holds virtual stage s and
// chunk 1 virtual stage 2pp-1-s.
void assign_stages(graph::Graph& g, int pp, int num_blocks, int chunks = 1, bool v_shape = false);

// Over the stages of the analyses' mesh, which owns the pipeline degree.
class AssignStages : public Pass {
 public:
  AssignStages(int num_blocks, int chunks, bool v_shape = false)
      : blocks_(num_blocks), chunks_(chunks), v_shape_(v_shape) {}
  std::string_view name() const override { return "assign-stages"; }
  void run(graph::Graph& g, Analyses& a) override {
    assign_stages(g, static_cast<int>(a.mesh().stages()), blocks_, chunks_, v_shape_);
  }

 private:
  int blocks_, chunks_;
  bool v_shape_;
};

}  // namespace stg::passes
