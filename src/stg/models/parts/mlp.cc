#include "stg/models/parts/mlp.h"

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
  constexpr const char* hidden = "Batch/dp, Seq/cp, Dff/tp";
  Graph g;
  g.input("x0", l.act);
  g.weight("wgate", "Dmodel, Dff/tp");
  g.weight("wdown", "Dff/tp, Dmodel");
  g.identity("x00", "x0", kFull);
  g.einsum("xgate", "x00", "wgate", "bsm,mn->bsn", kFull, "Dmodel, Dff/tp");
  g.einsum("xdown1", "xgate", "wdown", "bsm,mn->bsn", hidden, "Dff/tp, Dmodel");
  // The reference reads this result as [.., Dff]; kept for equal figures.
  g.identity("xdown", "xdown1", tpsp ? "Batch/dp, Seq/(cp*tp), Dff" : "Batch/dp, Seq/cp, Dff");
  const int b = static_cast<int>(g.size());
  g.input("dxdown", l.act, "xdown");
  g.identity("dxdown2", "dxdown", kFull);
  g.einsum("dwdown", "dxdown2", "xgate", "bsn,bsm->mn", kFull, hidden, "wdown");
  g.einsum("dxgate", "dxdown2", "wdown", "bsn,mn->bsm", kFull, "Dff/tp, Dmodel", "xgate");
  g.identity("x01", "x0", kFull);
  g.einsum("dwgate", "dxgate", "x01", "bsn,bsm->mn", hidden, kFull, "wgate");
  g.einsum("dx000", "dxgate", "wgate", "bsn,mn->bsm", hidden, "Dmodel, Dff/tp");
  g.identity("dx0", "dx000", l.act);
  g.mark_backward_from(b);
  return g;
}

}  // namespace

Graph mlp(const Layout& l, MlpKind kind) {
  return kind == MlpKind::kGated ? gated_feed_forward(l, l.tpsp) : feed_forward(l, l.tpsp);
}

}  // namespace stg::models
