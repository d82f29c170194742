#include "stg/models/parts/vocab_parallel_embedding.h"

#include "stg/models/parts/dims.h"

namespace stg::models {

namespace {

using namespace typed;

// The weight [Dvocal/tp, Dmodel]; activations whole and logits over the
// rank's vocabulary; a weight gradient before the step's reduction is a
// partial sum over the data- and context-parallel ranks.
struct Shapes {
  const Dims& d = dims();
  graph::Shape weight = {d.vocab_tp, d.hidden};
  graph::Shape full = {d.batch_dp, d.seq_cp, d.hidden};
  graph::Shape logits = {d.batch_dp, d.seq_cp, d.vocab_tp};
  graph::Shape partial_over_data = {c(1) / (d.cp * d.dp)};
  graph::Shape partial_over_tp = {c(1) / d.tp};
};

}  // namespace

graph::Graph vocab_parallel_input_embedding() {
  const Shapes s;
  graph::Graph g;
  weight(g, "w", s.weight);
  // A lookup: no arithmetic. Rows of other ranks' vocabulary are zero here,
  // so the result is a partial sum over tp (the consumer's layout turns it
  // into an all-reduce, or a reduce-scatter with sequence parallelism).
  custom(g, "y", "w", c(0), s.weight, s.full, s.partial_over_tp);
  const int b = static_cast<int>(g.size());
  input(g, "dy", s.full, "y");
  // Scatter-add of the output gradient into the rows of the looked-up tokens.
  custom(g, "dw", "dy", s.d.batch_dp * s.d.seq_cp * s.d.hidden, s.full, s.weight,
         s.partial_over_data);
  g.grad_of("w");
  g.mark_backward_from(b);
  return g;
}

graph::Graph vocab_parallel_output_layer(bool tpsp, bool training) {
  const Shapes s;
  const graph::Shape act = {s.d.batch_dp, tpsp ? s.d.seq_cp_tp : s.d.seq_cp, s.d.hidden};
  graph::Graph g;
  input(g, "x", act);
  weight(g, "w", s.weight);
  // The whole sequence is needed (an all-gather with sequence parallelism),
  // in the forward pass and again for the weight gradient.
  identity(g, "x_full", "x", s.full);
  einsum(g, "logits", "x_full", "w", "bsm,vm->bsv", s.full, s.weight);
  if (!training) return g;
  elementwise(g, "loss", "logits", 5, s.logits);
  const int b = static_cast<int>(g.size());
  elementwise(g, "dlogits", "loss", 5, s.logits);
  identity(g, "x_full_backward", "x", s.full);
  einsum(g, "dw", "dlogits", "x_full_backward", "bsv,bsm->vm", s.logits, s.full, "w");
  // A partial sum over tp (the contracted vocabulary is split), summed into
  // the blocks' layout by the identity's view.
  einsum(g, "dx_partial", "dlogits", "w", "bsv,vm->bsm", s.logits, s.weight);
  identity(g, "dx", "dx_partial", act);
  g.mark_backward_from(b);
  return g;
}

}  // namespace stg::models
