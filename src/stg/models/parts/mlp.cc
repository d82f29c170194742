#include "stg/models/parts/mlp.h"

#include "stg/models/parts/dims.h"

namespace stg::models {
namespace {

using graph::Graph;
using graph::Op;

// Gated FFN (LLaMA): down(up(x) * gate(x)).
Graph gated_feed_forward(const Layout& l, bool tpsp) {
  constexpr const char* hidden = "Batch/dp, Seq/cp, Dff/tp";
  Graph g;
  g.input("x0", l.act);
  g.weight("wup", "Dmodel, Dff/tp");
  g.weight("wgate", "Dmodel, Dff/tp");
  g.weight("wdown", "Dff/tp, Dmodel");
  g.identity("x00", "x0", kFull);
  g.einsum("xup", "x00", "wup", "bsm,mn->bsn", kFull, "Dmodel, Dff/tp");
  g.einsum("xgate", "x00", "wgate", "bsm,mn->bsn", kFull, "Dmodel, Dff/tp");
  g.einsum("xupgate", "xup", "xgate", "bsm,bsm->bsm", hidden, hidden);
  g.einsum("xdown1", "xupgate", "wdown", "bsm,mn->bsn", hidden, "Dff/tp, Dmodel");
  // The reference reads this result as [.., Dff]; kept for equal figures.
  g.identity("xdown", "xdown1", tpsp ? "Batch/dp, Seq/(cp*tp), Dff" : "Batch/dp, Seq/cp, Dff");
  const int b = static_cast<int>(g.size());
  g.input("dxdown", l.act, "xdown");
  g.identity("dxdown2", "dxdown", kFull);
  g.einsum("dwdown", "dxdown2", "xupgate", "bsn,bsm->mn", kFull, hidden, "wdown");
  g.einsum("dxupgate", "dxdown2", "wdown", "bsn,mn->bsm", kFull, "Dff/tp, Dmodel", "xupgate");
  g.einsum("dxup", "dxupgate", "xgate", "bsm,bsm->bsm", hidden, hidden, "xup");
  g.einsum("dxgate", "dxupgate", "xup", "bsm,bsm->bsm", hidden, hidden, "xgate");
  g.identity("x01", "x0", kFull);
  g.einsum("dwup", "dxup", "x01", "bsn,bsm->mn", hidden, kFull, "wup");
  g.einsum("dwgate", "dxgate", "x01", "bsn,bsm->mn", hidden, kFull, "wgate");
  g.einsum("dx00", "dxup", "wup", "bsn,mn->bsm", hidden, "Dmodel, Dff/tp");
  g.einsum("dx01", "dxgate", "wgate", "bsn,mn->bsm", hidden, "Dmodel, Dff/tp");
  g.op("dx000", Op::kAdd, "dx00", "dx01", kFull, kFull, "1/tp", "1/tp");
  g.grad_of("x0");
  g.identity("dx0", "dx000", l.act);
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
