// lower/op_cost.h: the one rule for an op's work, the element size of its
// data and what a comm op moves, which lowering evaluates and `stg plans`
// keeps as expressions. Expected values from the textbook counts: a matrix
// product of (B x D) by (D x F) is B*D*F multiply-accumulates, 2 FLOPs each.
#include "stg/lower/op_cost.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace stg::lower {
namespace {

const std::map<std::string, int64_t> kValues = {{"B", 4}, {"D", 8}, {"F", 16}};

int64_t at_values(const expr::Expr& e) { return e.evaluate(kValues).num(); }

LowerOptions physical() {
  LowerOptions o;
  o.bytes_per_element = 2;
  o.flops_per_mac = 2;
  o.kernel_flops = true;
  o.tensor_element_bytes = true;
  return o;
}

TEST(OpCost, AContractionChargesTwoFlopsPerMultiplyAccumulate) {
  graph::Graph g;
  g.input("x", "B, D");
  g.weight("w", "D, F");
  const int y = g.einsum("y", "x", "w", "bd,df->bf", "B, D", "D, F");
  const int p = g.einsum("p", "y", "y", "bf,bf->bf", "B, F", "B, F");  // element-wise
  g.evaluate_all();
  EXPECT_EQ(at_values(work_expr(op_work(g, y, physical()))), 2 * 4 * 8 * 16);
  EXPECT_EQ(at_values(work_expr(op_work(g, y, LowerOptions{}))), 4 * 8 * 16);  // MACs
  EXPECT_EQ(at_values(work_expr(op_work(g, p, physical()))), 4 * 16);
}

TEST(OpCost, AKernelWithItsOwnFlopsChargesThemInPhysicalUnits) {
  graph::Graph g;
  g.input("x", "B, D");
  const int k = g.custom("k", "x", "B*D", "B, D", "B, D");
  g.mutable_tensor(k).flops = expr::Expr::parse("7*B*D");
  g.evaluate_all();
  EXPECT_EQ(at_values(work_expr(op_work(g, k, physical()))), 7 * 4 * 8);
  EXPECT_EQ(at_values(work_expr(op_work(g, k, LowerOptions{}))), 4 * 8);
}

TEST(OpCost, ATensorWithItsOwnElementSizeIsSizedWithItInPhysicalUnits) {
  graph::Graph g;
  const int x = g.input("x", "B, D");
  const int w = g.weight("w", "D, F");
  g.mutable_tensor(w).element_bytes = 4;  // e.g. an fp32 gradient
  EXPECT_EQ(element_bytes(g, x, physical()), 2);
  EXPECT_EQ(element_bytes(g, w, physical()), 4);
  EXPECT_EQ(element_bytes(g, x, physical(), /*override=*/4), 4);
  EXPECT_EQ(element_bytes(g, w, LowerOptions{}), 1);  // the reference's units: elements
}

}  // namespace
}  // namespace stg::lower
