// The passes --framework megatron adds, one at a time on tiny graphs (in
// the style of passes_test.cc): set-gradient-precision, tie-embeddings and
// defer-weight-gradient-gathers.
// Each test writes a graph of a few rows in the module CSV format, runs the
// pass and checks the printed rows (write_module_csv) with FileCheck-style
// directives and a few fields directly.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stg/graph/csv_writer.h"
#include "stg/graph/op.h"
#include "stg/passes/defer_weight_gradient_gathers.h"
#include "stg/passes/gradient_precision.h"
#include "stg/passes/tie_embeddings.h"
#include "support/csv_sheets.h"
#include "support/filecheck.h"

namespace stg::passes {
namespace {

using graph::Graph;
using graph::Op;
using graph::Role;
using graph::Tensor;
using stg_test::file_check;

Graph sheet(const std::string& rows) { return test::parse_sheet(test::kCsvHeader + rows); }

std::string ir(const Graph& g) { return graph::write_module_csv(g); }

const Tensor& at(const Graph& g, const std::string& id) { return g[g.at(id)]; }

// A weight w, its gradient dw (Role::kGradient: grad_of names a weight), the
// gradient dy of an activation (Role::kActivation) and the update u.
const char kWeightAndGradients[] = R"(
  x,N,,,T,,"B, D",1
  w,Y,,,T,,"D, F",1
  y,N,x,w,M,"bd,df->bf","B, D",1,"D, F",1
  dy,N,,,T,,"B, F",1,,,y
  dw,N,dy,x,M,"bf,bd->df","B, F",1,"B, D",1,w
  u,N,w,dw,A,,"D, F",1,"D, F",1
)";

// ---------------------------------------------------------------------------
// set-gradient-precision

TEST(PassSetGradientPrecision, OnlyWeightGradientsGetTheElementSize) {
  Graph g = sheet(kWeightAndGradients);
  const mesh::Mesh mesh({{"dp", "dp", 2, mesh::AxisKind::kData, "--dp"}}, 1);
  const expr::Values values;
  Analyses analyses(mesh, values);
  SetGradientPrecision(4).run(g, analyses);
  EXPECT_EQ(at(g, "dw").role, Role::kGradient);
  EXPECT_EQ(at(g, "dw").element_bytes, 4);
  for (const char* id : {"x", "w", "y", "dy", "u"}) EXPECT_EQ(at(g, id).element_bytes, 0) << id;
  EXPECT_EQ(g.size(), 6u);  // nothing added
}

TEST(PassSetGradientPrecision, NoGradientsLeaveTheGraphUnchanged) {
  Graph g = sheet(R"(
    x,N,,,T,,"B, D",1
    y,N,x,,E,1,"B, D",1
  )");
  const std::string before = ir(g);
  const mesh::Mesh mesh({{"dp", "dp", 2, mesh::AxisKind::kData, "--dp"}}, 1);
  const expr::Values values;
  Analyses analyses(mesh, values);
  SetGradientPrecision(4).run(g, analyses);
  EXPECT_EQ(ir(g), before);
}

// ---------------------------------------------------------------------------
// tie-embeddings

// gradient_of by hand: w's gradient is dw, nothing else has one.
std::vector<int> gradient_of_w(const Graph& g) {
  std::vector<int> of(g.size(), -1);
  of[g.at("w")] = g.at("dw");
  return of;
}

TEST(PassTieEmbeddings, TiedGradientIsAllReducedAfterTheLinksOfItsStage) {
  // w is tied; stage 0 has one send (x.send1), stage 1 one receive, which
  // the all-reduce on stage 0 must not wait for. The sum has dw's view: D x F,
  // hidden B (dw sums over the batch).
  Graph g = sheet(R"(
    x,N,,,T,,"B, D",1
    x.send1,N,x,,SEND,,"B, D",1,,,,{"peer": "stage:1"}
    r,N,x,,RECV,,"B, D",1,,,,"{""stage"": 1, ""peer"": ""stage:0""}"
    w,Y,,,T,,"D, F",1,,,,{"tied": true}
    y,N,x,w,M,"bd,df->bf","B, D",1,"D, F",1
    dy,N,,,T,,"B, F",1,,,y
    dw,N,dy,x,M,"bf,bd->df","B, F",1,"B, D",1,w
    u,N,w,dw,A,,"D, F",1,"D, F",1
  )");
  EXPECT_EQ(tie_embeddings(g, gradient_of_w(g), /*group=*/3), 1);
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK: dw,N,dy,x,M,
    CHECK-NEXT: dw.tied_sum,N,dw,,COLL,ALL_REDUCE,"D,F",B,"D,F",B,,
    CHECK-SAME: ""data_deps"": [""x.send1""], ""role"": ""gradient""
    CHECK-SAME: ""comm_axis"": 3
    CHECK-SAME: ""label"": ""dw@0_TIED_SUM""
    CHECK-NEXT: u,N,w,dw.tied_sum,A,
    CHECK-NOT: tied_sum
  )"));
  const Tensor& sum = at(g, "dw.tied_sum");
  EXPECT_EQ(sum.op, Op::kCollective);
  EXPECT_EQ(sum.comm.type, graph::CollType::kAllReduce);
  EXPECT_EQ(sum.comm.axis, 3);
  EXPECT_EQ(sum.role, Role::kGradient);
  EXPECT_TRUE(sum.is_backward());
  EXPECT_EQ(sum.stage, 0);
  EXPECT_EQ(sum.extra_deps, std::vector<int>{g.at("x.send1")});
  EXPECT_EQ(at(g, "u").x2, g.at("dw.tied_sum"));
}

TEST(PassTieEmbeddings, UntiedWeightsAreLeftAlone) {
  Graph g = sheet(kWeightAndGradients);
  const std::string before = ir(g);
  EXPECT_EQ(tie_embeddings(g, gradient_of_w(g), /*group=*/3), 0);
  EXPECT_EQ(ir(g), before);
}

TEST(PassTieEmbeddings, ATiedWeightNeedsAGradient) {
  Graph g = sheet(R"(
    w,Y,,,T,,"D, F",1,,,,{"tied": true}
  )");
  EXPECT_THROW(tie_embeddings(g, std::vector<int>(g.size(), -1), 0), graph::GraphError);
}

// ---------------------------------------------------------------------------
// defer-weight-gradient-gathers

// Two linear layers under sequence parallelism, as Megatron-LM splits them:
// h = x w1 (column-parallel: x, split over the sequence, is gathered
// first) and z = h w2 (row-parallel). Backward: dz arrives split over the
// sequence and is gathered once for the input gradient dh and w2's weight
// gradient; w1's weight gradient reads x gathered again, through an
// identity (x.w), by a gather only it needs.
const char kSequenceParallelLayers[] = R"(
  x,N,,,T,,"B, S/tp, D",1
  w1,Y,,,T,,"D, F/tp",1
  x.gather,N,x,,COLL,ALL_GATHER,"B, S/tp, D",1,"B, S, D",1,,{"comm_axis": 1}
  h,N,x.gather,w1,M,"bsd,df->bsf","B, S, D",1,"D, F/tp",1
  w2,Y,,,T,,"F/tp, D",1
  z,N,h,w2,M,"bsf,fd->bsd","B, S, F/tp",1,"F/tp, D",1
  dz,N,,,T,,"B, S/tp, D",1,,,z
  dz.gather,N,dz,,COLL,ALL_GATHER,"B, S/tp, D",1,"B, S, D",1,,{"comm_axis": 1}
  dw2,N,dz.gather,h,M,"bsd,bsf->fd","B, S, D",1,"B, S, F/tp",1,w2
  dh,N,dz.gather,w2,M,"bsd,fd->bsf","B, S, D",1,"F/tp, D",1,h
  x.gather_w,N,x,,COLL,ALL_GATHER,"B, S/tp, D",1,"B, S, D",1,,"{""comm_axis"": 1, ""backward"": true}"
  x.w,N,x.gather_w,,I,,"B, S, D",1
  dw1,N,dh,x.w,M,"bsf,bsd->df","B, S, F/tp",1,"B, S, D",1,w1
  dx,N,dh,w1,M,"bsf,df->bsd","B, S, F/tp",1,"D, F/tp",1,x
)";

TEST(PassDeferWeightGradientGathers, TheWeightGradientsGatherWaitsForItsOutputGradient) {
  Graph g = sheet(kSequenceParallelLayers);
  EXPECT_EQ(defer_weight_gradient_gathers(g), 1);
  // x.gather_w waits for dh, the output gradient dw1 contracts it with;
  // the forward's gather and the output gradient's (read by dh too) keep
  // their inputs only.
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK-NOT: data_deps
    CHECK: x.gather_w,N,x,,COLL,ALL_GATHER,
    CHECK-SAME: ""data_deps"": [""dh""]
    CHECK-NEXT: x.w,N,x.gather_w,,I,
    CHECK-NOT: data_deps
  )"));
  EXPECT_EQ(at(g, "x.gather_w").extra_deps, std::vector<int>{g.at("dh")});
  for (const char* id : {"x.gather", "dz.gather", "x.w", "dw1", "dh"})
    EXPECT_TRUE(at(g, id).extra_deps.empty()) << id;
  EXPECT_EQ(g.size(), 14u);                      // nothing added
  EXPECT_EQ(at(g, "x.gather_w").x1, g.at("x"));  // the input is unchanged
}

TEST(PassDeferWeightGradientGathers, TwoWeightGradientsOfOneGatherWaitForBoth) {
  // A gated MLP's two column-parallel weights read one gathered input: the
  // gather waits for both output gradients, once each, also when the pass
  // runs twice.
  Graph g = sheet(R"(
    x,N,,,T,,"B, S/tp, D",1
    wa,Y,,,T,,"D, F/tp",1
    wb,Y,,,T,,"D, F/tp",1
    a,N,x,wa,M,"bsd,df->bsf","B, S, D",1,"D, F/tp",1
    b,N,x,wb,M,"bsd,df->bsf","B, S, D",1,"D, F/tp",1
    da,N,,,T,,"B, S, F/tp",1,,,a
    db,N,,,T,,"B, S, F/tp",1,,,b
    x.gather_w,N,x,,COLL,ALL_GATHER,"B, S/tp, D",1,"B, S, D",1,,"{""comm_axis"": 1, ""backward"": true}"
    dwa,N,da,x.gather_w,M,"bsf,bsd->df","B, S, F/tp",1,"B, S, D",1,wa
    dwb,N,db,x.gather_w,M,"bsf,bsd->df","B, S, F/tp",1,"B, S, D",1,wb
  )");
  EXPECT_EQ(defer_weight_gradient_gathers(g), 1);
  EXPECT_EQ(defer_weight_gradient_gathers(g), 1);
  EXPECT_EQ(at(g, "x.gather_w").extra_deps, (std::vector<int>{g.at("da"), g.at("db")}));
}

TEST(PassDeferWeightGradientGathers, WithoutSequenceParallelismNothingChanges) {
  // Tensor parallelism alone: the weight gradient reads x as it is, and the
  // input gradient is all-reduced; no gather to defer.
  Graph g = sheet(R"(
    x,N,,,T,,"B, S, D",1
    w1,Y,,,T,,"D, F/tp",1
    h,N,x,w1,M,"bsd,df->bsf","B, S, D",1,"D, F/tp",1
    dh,N,,,T,,"B, S, F/tp",1,,,h
    dw1,N,dh,x,M,"bsf,bsd->df","B, S, F/tp",1,"B, S, D",1,w1
    dx_partial,N,dh,w1,M,"bsf,df->bsd","B, S, F/tp",1,"D, F/tp",1
    dx,N,dx_partial,,COLL,ALL_REDUCE,"B, S, D",1/tp,"B, S, D",1,,{"comm_axis": 1}
  )");
  const std::string before = ir(g);
  EXPECT_EQ(defer_weight_gradient_gathers(g), 0);
  EXPECT_EQ(ir(g), before);
}

}  // namespace
}  // namespace stg::passes
