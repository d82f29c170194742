#include "stg/models/blocks/mtp_module.h"

#include "stg/models/flat_weights.h"
#include "stg/models/mlps/mlp_row.h"
#include "stg/models/parts/dims.h"
#include "stg/models/parts/norms.h"

namespace stg::models {
namespace {

using graph::Graph;
using namespace typed;

// The two norms, their join and the projection eh_proj, with its own
// flat weight bucket. eh_proj is split by output columns over tp
// (Megatron-LM's ColumnParallelLinear): the joined pair is gathered whole
// (over the sequence, with tpsp), projected to Dmodel/tp, gathered over
// the columns and cut back to the rank's part of the sequence; backward,
// the gradient is gathered and cut to the rank's columns, and the joined
// pair's gradient is a partial sum over tp.
Graph projection(const Layout& l, const PartChoices& choices) {
  const Dims& d = dims();
  const graph::Shape joined = {l.shape[0], l.shape[1], c(2) * d.hidden};
  const graph::Shape joined_full = {l.full[0], l.full[1], c(2) * d.hidden};
  const graph::Shape columns = {l.full[0], l.full[1], d.hidden / d.tp};
  const graph::Shape w = {c(2) * d.hidden, d.hidden / d.tp}, one = {c(1)};
  Graph g;
  g.append(layer_norm(l), "hnorm.", {}, {});
  g.append(layer_norm(l), "enorm.", {}, {});
  weight(g, "eh_proj", w);
  const int join =
      op(g, "joined", graph::Op::kConcat, "hnorm.y", "enorm.y", l.shape, &l.shape, one, one);
  g.mutable_tensor(join).axis = 2;
  identity(g, "joined_full", "joined", joined_full);
  einsum(g, "projected_columns", "joined_full", "eh_proj", "bsm,mn->bsn", joined_full, w);
  identity(g, "projected_full", "projected_columns", l.full);
  identity(g, "projected", "projected_full", l.shape);
  const int b = static_cast<int>(g.size());
  input(g, "dprojected", l.shape, "projected");
  identity(g, "dprojected_full", "dprojected", l.full);
  identity(g, "dprojected_columns", "dprojected_full", columns);
  identity(g, "joined_full_backward", "joined", joined_full);
  einsum(g, "deh_proj", "dprojected_columns", "joined_full_backward", "bsn,bsm->mn", columns,
         joined_full, "eh_proj");
  // A partial sum over tp (the contracted columns are split), summed into
  // the joined pair's layout.
  einsum(g, "djoined_partial", "dprojected_columns", "eh_proj", "bsn,mn->bsm", columns, w);
  identity(g, "djoined", "djoined_partial", joined);
  slice(g, "dhidden_normed", "djoined", 2, d.hidden, joined);
  slice(g, "dembedded_normed", "djoined", 2, d.hidden, joined);
  g.mark_backward_from(b);
  g.link("dhidden_normed", "hnorm.dy");
  g.link("dembedded_normed", "enorm.dy");
  flatten_block_weights(g, choices.reduce_per_step);
  return g;
}

}  // namespace

Graph mtp_module(const BlockSpec& spec, const BlockContext& c) {
  BlockSpec inner = spec;
  inner.kind = BlockKind::kBlock;
  // The experts' layouts need sequence-sharded activations (as the block).
  const Layout l(c.tpsp || (inner.mlp && inner.mlp->experts));
  Graph g;
  g.append(projection(l, c.choices), "", {}, {});
  g.append(block_kind(inner.kind).build(inner, c), "block.", {}, {});
  g.append(layer_norm(l), "final_norm.", {}, {});
  g.link("projected", "block.input_norm.x");
  g.link("block.input_norm.dx", "dprojected");
  g.link(MtpPorts::out, "final_norm.x");
  g.link(MtpPorts::dout_from_head, MtpPorts::dout);
  return g;
}

}  // namespace stg::models
