#include "stg/models/parts/mlp.h"

#include "stg/models/parts/dims.h"

namespace stg::models {
namespace {

using graph::Graph;
using graph::Op;

// Gated FFN (LLaMA): down(up(x) * gate(x)).
Graph gated_feed_forward(const Layout& l, bool tpsp) {
  using namespace typed;
  const Dims& d = dims();
  const graph::Shape hidden = {d.batch_dp, d.seq_cp, d.ffn_tp};
  const graph::Shape w_in = {d.hidden, d.ffn_tp}, w_out = {d.ffn_tp, d.hidden};
  const graph::Shape& full = l.full;
  Graph g;
  input(g, "x0", l.shape);
  weight(g, "wup", w_in);
  weight(g, "wgate", w_in);
  weight(g, "wdown", w_out);
  identity(g, "x00", "x0", full);
  einsum(g, "xup", "x00", "wup", "bsm,mn->bsn", full, w_in);
  einsum(g, "xgate", "x00", "wgate", "bsm,mn->bsn", full, w_in);
  einsum(g, "xupgate", "xup", "xgate", "bsm,bsm->bsm", hidden, hidden);
  einsum(g, "xdown1", "xupgate", "wdown", "bsm,mn->bsn", hidden, w_out);
  // The reference reads this result as [.., Dff]; kept for equal figures.
  identity(g, "xdown", "xdown1", {d.batch_dp, tpsp ? d.seq_cp_tp : d.seq_cp, d.ffn});
  const int b = static_cast<int>(g.size());
  input(g, "dxdown", l.shape, "xdown");
  identity(g, "dxdown2", "dxdown", full);
  einsum(g, "dwdown", "dxdown2", "xupgate", "bsn,bsm->mn", full, hidden, "wdown");
  einsum(g, "dxupgate", "dxdown2", "wdown", "bsn,mn->bsm", full, w_out, "xupgate");
  einsum(g, "dxup", "dxupgate", "xgate", "bsm,bsm->bsm", hidden, hidden, "xup");
  einsum(g, "dxgate", "dxupgate", "xup", "bsm,bsm->bsm", hidden, hidden, "xgate");
  identity(g, "x01", "x0", full);
  einsum(g, "dwup", "dxup", "x01", "bsn,bsm->mn", hidden, full, "wup");
  einsum(g, "dwgate", "dxgate", "x01", "bsn,bsm->mn", hidden, full, "wgate");
  einsum(g, "dx00", "dxup", "wup", "bsn,mn->bsm", hidden, w_in);
  einsum(g, "dx01", "dxgate", "wgate", "bsn,mn->bsm", hidden, w_in);
  // Partial sums over tp.
  const graph::Shape per_tp = {c(1) / d.tp};
  op(g, "dx000", Op::kAdd, "dx00", "dx01", full, &full, per_tp, per_tp);
  g.grad_of("x0");
  identity(g, "dx0", "dx000", l.shape);
  g.mark_backward_from(b);
  return g;
}

Graph feed_forward(const Layout& l, bool tpsp) {
  using namespace typed;
  const Dims& d = dims();
  const graph::Shape hidden = {d.batch_dp, d.seq_cp, d.ffn_tp};
  const graph::Shape w_in = {d.hidden, d.ffn_tp}, w_out = {d.ffn_tp, d.hidden};
  Graph g;
  input(g, "x0", l.shape);
  weight(g, "wgate", w_in);
  weight(g, "wdown", w_out);
  identity(g, "x00", "x0", l.full);
  einsum(g, "xgate", "x00", "wgate", "bsm,mn->bsn", l.full, w_in);
  einsum(g, "xdown1", "xgate", "wdown", "bsm,mn->bsn", hidden, w_out);
  // The reference reads this result as [.., Dff]; kept for equal figures.
  identity(g, "xdown", "xdown1", {d.batch_dp, tpsp ? d.seq_cp_tp : d.seq_cp, d.ffn});
  const int b = static_cast<int>(g.size());
  input(g, "dxdown", l.shape, "xdown");
  identity(g, "dxdown2", "dxdown", l.full);
  einsum(g, "dwdown", "dxdown2", "xgate", "bsn,bsm->mn", l.full, hidden, "wdown");
  einsum(g, "dxgate", "dxdown2", "wdown", "bsn,mn->bsm", l.full, w_out, "xgate");
  identity(g, "x01", "x0", l.full);
  einsum(g, "dwgate", "dxgate", "x01", "bsn,bsm->mn", hidden, l.full, "wgate");
  einsum(g, "dx000", "dxgate", "wgate", "bsn,mn->bsm", hidden, w_in);
  identity(g, "dx0", "dx000", l.shape);
  g.mark_backward_from(b);
  return g;
}

}  // namespace

Graph mlp(const Layout& l, MlpKind kind) {
  return kind == MlpKind::kGated ? gated_feed_forward(l, l.tpsp) : feed_forward(l, l.tpsp);
}

}  // namespace stg::models
