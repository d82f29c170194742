#include "stg/models/parts/megatron_embedding.h"

namespace stg::models {

namespace {
constexpr const char* kWeight = "Dvocal/tp, Dmodel";
constexpr const char* kFull = "Batch/dp, Seq/cp, Dmodel";
constexpr const char* kLogits = "Batch/dp, Seq/cp, Dvocal/tp";
// A weight gradient before the step's reduction: a partial sum over the
// data- and context-parallel ranks.
constexpr const char* kPartialOverData = "1/(cp*dp)";
}  // namespace

graph::Graph megatron_input_embedding() {
  graph::Graph g;
  g.weight("w", kWeight);
  // A lookup: no arithmetic. Rows of other ranks' vocabulary are zero here,
  // so the result is a partial sum over tp (the consumer's layout turns it
  // into an all-reduce, or a reduce-scatter with sequence parallelism).
  g.custom("y", "w", "0", kWeight, kFull, "1/tp");
  const int b = static_cast<int>(g.size());
  g.input("dy", kFull, "y");
  // Scatter-add of the output gradient into the rows of the looked-up tokens.
  g.custom("dw", "dy", "Batch/dp*Seq/cp*Dmodel", kFull, kWeight, kPartialOverData);
  g.grad_of("w");
  g.mark_backward_from(b);
  return g;
}

graph::Graph megatron_output_layer(bool tpsp) {
  const char* act = tpsp ? "Batch/dp, Seq/(cp*tp), Dmodel" : kFull;
  graph::Graph g;
  g.input("x", act);
  g.weight("w", kWeight);
  // The whole sequence is needed (an all-gather with sequence parallelism),
  // in the forward pass and again for the weight gradient.
  g.identity("x_full", "x", kFull);
  g.einsum("logits", "x_full", "w", "bsm,vm->bsv", kFull, kWeight);
  g.elementwise("loss", "logits", 5, kLogits);
  const int b = static_cast<int>(g.size());
  g.elementwise("dlogits", "loss", 5, kLogits);
  g.identity("x_full_backward", "x", kFull);
  g.einsum("dw", "dlogits", "x_full_backward", "bsv,bsm->vm", kLogits, kFull, "w");
  // A partial sum over tp (the contracted vocabulary is split), summed into
  // the blocks' layout by the identity's view.
  g.einsum("dx_partial", "dlogits", "w", "bsv,vm->bsm", kLogits, kWeight);
  g.identity("dx", "dx_partial", act);
  g.mark_backward_from(b);
  return g;
}

}  // namespace stg::models
