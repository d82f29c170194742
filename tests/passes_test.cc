// One pass at a time on tiny graphs, in the habit of XLA's SPMD partitioner
// tests and MLIR's FileCheck tests: each test writes a graph of a few rows in
// the module CSV format (graph/csv_module.h), runs one pass and checks the
// printed IR (write_module_csv, one row per tensor) with FileCheck-style
// directives (tests/support/filecheck.h) and/or a few fields directly.
// The last tests run a ring over a mesh axis through lowering and emission.
//
// Reading the printed rows: shapes print without blanks ("B,F"), ids are
// "name" for revision 0, and extra_attr is JSON inside a quoted CSV field,
// so its quotes are doubled (""label"": ""a@0_X1COMM"").
#include <google/protobuf/io/coded_stream.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "et_def_v004.pb.h"
#include "stg/emit/flat_writer.h"
#include "stg/emit/stage_template.h"
#include "stg/emit/trace_writer.h"
#include "stg/expr/values.h"
#include "stg/graph/csv_module.h"
#include "stg/graph/csv_writer.h"
#include "stg/graph/op.h"
#include "stg/lower/lower_stage.h"
#include "stg/mesh/mesh.h"
#include "stg/mesh/rank_layout.h"
#include "stg/passes/bind_symbols.h"
#include "stg/passes/grad_update.h"
#include "stg/passes/insert_collectives.h"
#include "stg/passes/insert_send_recv.h"
#include "stg/passes/micro_batch.h"
#include "stg/passes/pass.h"
#include "stg/passes/pipeline.h"
#include "stg/passes/recompute.h"
#include "support/filecheck.h"

namespace stg::passes {
namespace {

using expr::Expr;
using graph::CollType;
using graph::Graph;
using graph::Op;
using graph::Tensor;
using stg_test::file_check;

// ---------------------------------------------------------------------------
// Helpers.

// A graph from CSV rows (the header is added; blank lines and the blanks
// around fields are ignored).
Graph sheet(const std::string& rows) {
  return graph::parse_module_csv(
      "id,require_grads,x1,x2,op_type,op_attr,x1_shape,x1_hidden,x2_shape,x2_hidden,grad_of,"
      "extra_attr\n" +
          rows,
      "test.csv");
}

std::string ir(const Graph& g) { return graph::write_module_csv(g); }

const Tensor& at(const Graph& g, const std::string& id) { return g[g.at(id)]; }

constexpr int kDp = 0, kTp = 1;

// dp and tp of degree 2 (the mesh of the passes that need one).
mesh::Mesh dp_tp_mesh(int64_t stages = 1) {
  return mesh::Mesh({{"dp", "dp", 2, mesh::AxisKind::kData, "--dp"},
                     {"tp", "tp", 2, mesh::AxisKind::kTensor, "--tp"}},
                    stages);
}

graph::ShardingRule dp_tp_rule() {
  graph::ShardingRule r;
  r.axes = {{kDp, "dp"}, {kTp, "tp"}};
  r.degree_symbols = {"dp", "tp", "cp", "sp", "ep"};
  r.claim = graph::ClaimRule::kEveryAxisInDim;
  return r;
}

// ---------------------------------------------------------------------------
// The matcher itself.

TEST(FileCheck, MatchesInOrder) {
  const std::string text = "a,1\nb,2\nc,3\n";
  EXPECT_TRUE(file_check(text, "CHECK: a\nCHECK: c,3"));
  EXPECT_FALSE(file_check(text, "CHECK: c\nCHECK: a"));
  EXPECT_FALSE(file_check(text, "CHECK: d"));
}

TEST(FileCheck, NextAndSame) {
  const std::string text = "a,1\nb,2\nc,3\n";
  EXPECT_TRUE(file_check(text, "CHECK: a\nCHECK-NEXT: b\nCHECK-SAME: 2\nCHECK-NEXT: c"));
  EXPECT_FALSE(file_check(text, "CHECK: a\nCHECK-NEXT: c"));
  EXPECT_FALSE(file_check(text, "CHECK: a\nCHECK-SAME: 2"));
  // SAME searches after the previous match, not the whole line.
  EXPECT_FALSE(file_check(text, "CHECK: 2\nCHECK-SAME: b"));
  EXPECT_FALSE(file_check(text, "CHECK-NEXT: a"));  // no previous match
}

TEST(FileCheck, NotBetweenMatchesAndAtTheEnd) {
  const std::string text = "a\nx\nb\ny\n";
  EXPECT_TRUE(file_check(text, "CHECK: a\nCHECK-NOT: y\nCHECK: b"));
  EXPECT_FALSE(file_check(text, "CHECK: a\nCHECK-NOT: x\nCHECK: b"));
  EXPECT_TRUE(file_check(text, "CHECK: b\nCHECK-NOT: x"));
  EXPECT_FALSE(file_check(text, "CHECK: b\nCHECK-NOT: y"));
  EXPECT_FALSE(file_check(text, "CHECK-NOT: a\nCHECK: b"));  // from the start
}

TEST(FileCheck, ReportsTheFailingCheckAndTheText) {
  const ::testing::AssertionResult r = file_check("alpha\nbeta\n", "CHECK: alpha\nCHECK: gamma");
  ASSERT_FALSE(r);
  const std::string message = r.message();
  EXPECT_NE(message.find("check line 2 'CHECK: gamma': not found"), std::string::npos) << message;
  EXPECT_NE(message.find("2: beta"), std::string::npos) << message;
  EXPECT_FALSE(file_check("x", "CHECK-MAYBE: x"));  // unknown directive
  EXPECT_FALSE(file_check("x", ""));                // nothing checked
}

// ---------------------------------------------------------------------------
// insert-collectives

TEST(PassInsertCollectives, PartialSumReadDuplicatedGetsAllReduce) {
  // y contracts D/tp: a partial sum over tp; a reads it whole.
  Graph g = sheet(R"(
    x,N,,,T,,"B, D/tp",1
    w,N,,,T,,"D/tp, F",1
    y,N,x,w,M,"bd,df->bf","B, D/tp",1,"D/tp, F",1
    a,N,y,,E,1,"B, F",1
    z,N,a,,E,1,"B, F",1
  )");
  insert_collectives(g, dp_tp_rule());
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK: y,N,x,w,M,
    CHECK-NEXT: a,N,a.x1comm0,,E,1,"B,F",1,
    CHECK-NEXT: a.x1comm0,N,y,,COLL,ALL_REDUCE,"B,F",D/tp,"B,F",1,,
    CHECK-SAME: ""comm_axis"": 1, ""label"": ""a@0_X1COMM""
    CHECK-NEXT: z,N,a,,E,
    CHECK-NOT: COLL
  )"));
  const Tensor& a = at(g, "a");
  const Tensor& c = g[a.x1];
  EXPECT_EQ(c.id(), "a.x1comm0@0");
  EXPECT_EQ(c.op, Op::kCollective);
  EXPECT_EQ(c.comm.type, CollType::kAllReduce);
  EXPECT_EQ(c.comm.axis, kTp);
  EXPECT_EQ(c.comm.label, "a@0_X1COMM");
  EXPECT_EQ(c.x1, g.at("y"));
  EXPECT_EQ(a.x1 - 1, g.at("a"));  // right after its consumer
}

TEST(PassInsertCollectives, PartitionedReadDuplicatedGetsAllGather) {
  Graph g = sheet(R"(
    x,N,,,T,,"B/dp, D",1
    y,N,x,,E,1,"B, D",1
  )");
  insert_collectives(g, dp_tp_rule());
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK: x,N,,,T,,"B/dp,D",1,
    CHECK-NEXT: y,N,y.x1comm0,,E,
    CHECK-NEXT: y.x1comm0,N,x,,COLL,ALL_GATHER,"B/dp,D",1,"B,D",1,,
    CHECK-SAME: ""comm_axis"": 0, ""label"": ""y@0_X1COMM""
  )"));
  EXPECT_EQ(at(g, "y.x1comm0").comm.type, CollType::kAllGather);
  EXPECT_EQ(at(g, "y.x1comm0").comm.axis, kDp);
}

TEST(PassInsertCollectives, SecondInputIsNamedX2_COMM) {
  Graph g = sheet(R"(
    x,N,,,T,,"B, D",1
    s,N,,,T,,"B/dp, D",1
    y,N,x,s,E2,1,"B, D",1,"B, D",1
  )");
  insert_collectives(g, dp_tp_rule());
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK: y,N,x,y.x2comm0,E2,
    CHECK-NEXT: y.x2comm0,N,s,,COLL,ALL_GATHER,
    CHECK-SAME: ""label"": ""y@0_X2_COMM""
  )"));
}

TEST(PassInsertCollectives, TwoAxesGiveAChainInMeshAxisOrder) {
  // y is partitioned on dp and a partial sum over tp; a reads it whole.
  Graph g = sheet(R"(
    x,N,,,T,,"B/dp, D/tp",1
    w,N,,,T,,"D/tp, F",1
    y,N,x,w,M,"bd,df->bf","B/dp, D/tp",1,"D/tp, F",1
    a,N,y,,E,1,"B, F",1
  )");
  insert_collectives(g, dp_tp_rule());
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK: a,N,a.x1comm1,,E,
    CHECK-NEXT: a.x1comm0,N,y,,COLL,ALL_GATHER,"B/dp,F",D/tp,"B,F",1,,
    CHECK-SAME: ""comm_axis"": 0, ""label"": ""a@0_X1COMM""
    CHECK-NEXT: a.x1comm1,N,a.x1comm0,,COLL,ALL_REDUCE,"B/dp,F",D/tp,"B,F",1,,
    CHECK-SAME: ""comm_axis"": 1, ""label"": ""a@0_X1COMM""
  )"));
}

TEST(PassInsertCollectives, InjectedCreatorIsUsed) {
  Graph g = sheet(R"(
    x,N,,,T,,"B/dp, D/tp",1
    w,N,,,T,,"D/tp, F",1
    y,N,x,w,M,"bd,df->bf","B/dp, D/tp",1,"D/tp, F",1
    a,N,y,,E,1,"B, F",1
  )");
  struct Seen {
    int consumer, operand, source, input, position;
  };
  std::vector<Seen> seen;
  auto bucketed = [&](const Graph&, const CollectiveRequest& r) {
    seen.push_back({r.consumer, r.operand, r.source, r.input, r.position});
    Tensor t = collective_tensor(r);
    t.name = "bucket" + std::to_string(r.position);
    t.comm.label = "grad_bucket";
    return t;
  };
  const int y = g.at("y"), a = g.at("a");
  insert_collectives(g, dp_tp_rule(), bucketed);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].consumer, a);
  EXPECT_EQ(seen[0].operand, 1);
  EXPECT_EQ(seen[0].source, y);
  EXPECT_EQ(seen[0].input, y);
  EXPECT_EQ(seen[0].position, 0);
  EXPECT_EQ(seen[1].source, y);
  EXPECT_NE(seen[1].input, y);  // the first collective of the chain
  EXPECT_EQ(seen[1].position, 1);
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK-NOT: comm0
    CHECK: a,N,bucket1,,E,
    CHECK-NEXT: bucket0,N,y,,COLL,ALL_GATHER,
    CHECK-SAME: ""label"": ""grad_bucket""
    CHECK-NEXT: bucket1,N,bucket0,,COLL,ALL_REDUCE,
    CHECK-SAME: ""label"": ""grad_bucket""
    CHECK-NOT: comm
  )"));
}

TEST(PassInsertCollectives, MatchingViewsAndLocalSlicesLeaveTheGraphUnchanged) {
  // y reads x as written; z reads y split further over tp (a local slice).
  Graph g = sheet(R"(
    x,N,,,T,,"B/dp, D",1
    y,N,x,,E,1,"B/dp, D",1
    z,N,y,,E,1,"B/dp, D/tp",1
  )");
  const std::string before = ir(g);
  insert_collectives(g, dp_tp_rule());
  EXPECT_EQ(ir(g), before);
}

TEST(PassInsertCollectives, ImpossibleTransitionNamesInputAndConsumer) {
  Graph g = sheet(R"(
    x,N,,,T,,"B, D",1
    y,N,x,,E,1,"B, D",F/tp
  )");
  try {
    insert_collectives(g, dp_tp_rule());
    FAIL() << "a duplicated tensor read as a partial sum was accepted";
  } catch (const graph::GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("input x@0 of y@0"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------
// insert-send-recv

TEST(PassInsertSendRecv, CrossStageEdgeBecomesSendAndRecv) {
  Graph g = sheet(R"(
    x,N,,,T,,"B, D",1
    y,N,x,,E,1,"B, D",1,,,,{"stage": 1}
  )");
  insert_send_recv(g);
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK: x,N,,,T,
    CHECK-NEXT: x.send1,N,x,,SEND,,"B,D",1,,,,
    CHECK-SAME: ""peer"": ""stage:1"", ""label"": ""x@0_Y_SEND""
    CHECK-NEXT: shadow_x.recv1,N,x,,RECV,,"B,D",1,,,,
    CHECK-SAME: ""stage"": 1, ""label"": ""shadow_x@0_Y_RECV""
    CHECK-NEXT: y,N,shadow_x.recv1,,E,
  )"));
  const Tensor& send = at(g, "x.send1");
  EXPECT_EQ(send.stage, 0);
  EXPECT_EQ(send.comm.peer, mesh::Peer::on_stage(1));
  EXPECT_EQ(send.comm.tag, 0);
  const Tensor& recv = at(g, "shadow_x.recv1");
  EXPECT_EQ(recv.stage, 1);
  EXPECT_EQ(recv.comm.peer, mesh::Peer::on_stage(0));
  EXPECT_EQ(recv.comm.tag, 0);
  EXPECT_EQ(at(g, "y").x1, g.at("shadow_x.recv1"));
}

TEST(PassInsertSendRecv, TagsFollowFirstUse) {
  // y reads b first, then a: b's link gets tag 0 although a comes first.
  Graph g = sheet(R"(
    a,N,,,T,,"B, D",1
    b,N,,,T,,"B, D",1
    y,N,b,a,E2,1,"B, D",1,"B, D",1,,{"stage": 1}
  )");
  insert_send_recv(g);
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK: a,N,,,T,
    CHECK-NEXT: a.send1,N,a,,SEND,
    CHECK-NEXT: b,N,,,T,
    CHECK-NEXT: b.send1,N,b,,SEND,
    CHECK-NEXT: shadow_b.recv1,N,b,,RECV,
    CHECK-NEXT: shadow_a.recv1,N,a,,RECV,
    CHECK-NEXT: y,N,shadow_b.recv1,shadow_a.recv1,E2,
  )"));
  EXPECT_EQ(at(g, "b.send1").comm.tag, 0);
  EXPECT_EQ(at(g, "shadow_b.recv1").comm.tag, 0);
  EXPECT_EQ(at(g, "a.send1").comm.tag, 1);
  EXPECT_EQ(at(g, "shadow_a.recv1").comm.tag, 1);
}

TEST(PassInsertSendRecv, OneProducerReadOnTwoStagesGetsTwoSends) {
  // y and y2 share one RECV on stage 1; z has its own on stage 2.
  Graph g = sheet(R"(
    x,N,,,T,,"B, D",1
    y,N,x,,E,1,"B, D",1,,,,{"stage": 1}
    y2,N,x,,E,1,"B, D",1,,,,{"stage": 1}
    z,N,x,,E,1,"B, D",1,,,,{"stage": 2}
  )");
  insert_send_recv(g);
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK: x,N,,,T,
    CHECK-NEXT: x.send1,N,x,,SEND,
    CHECK-SAME: ""peer"": ""stage:1""
    CHECK-NEXT: x.send2,N,x,,SEND,
    CHECK-SAME: ""peer"": ""stage:2"", ""tag"": 1
    CHECK-NEXT: shadow_x.recv1,N,x,,RECV,
    CHECK-NEXT: y,N,shadow_x.recv1,,E,
    CHECK-NEXT: y2,N,shadow_x.recv1,,E,
    CHECK-NEXT: shadow_x.recv2,N,x,,RECV,
    CHECK-SAME: ""stage"": 2, ""tag"": 1
    CHECK-NEXT: z,N,shadow_x.recv2,,E,
  )"));
}

TEST(PassInsertSendRecv, ExtraDependencyAcrossStagesIsALinkToo) {
  Graph g = sheet(R"(
    x,N,,,T,,"B, D",1
    w,N,,,T,,"B, D",1,,,,{"stage": 1}
    y,N,w,,E,1,"B, D",1,,,,"{""data_deps"": [""x""], ""stage"": 1}"
  )");
  insert_send_recv(g);
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK: x.send1,N,x,,SEND,
    CHECK: shadow_x.recv1,N,x,,RECV,
    CHECK-NEXT: y,N,w,,E,
    CHECK-SAME: ""data_deps"": [""shadow_x.recv1""]
  )"));
}

// ---------------------------------------------------------------------------
// assign-stages

// One tensor per placement: the first part, blocks 0-3, the last part.
const char kFourBlocks[] = R"(
  in,N,,,T,,B,1,,,,{"placement": "first"}
  b0,N,in,,E,1,B,1,,,,{"placement": "block:0"}
  b1,N,b0,,E,1,B,1,,,,{"placement": "block:1"}
  b2,N,b1,,E,1,B,1,,,,{"placement": "block:2"}
  b3,N,b2,,E,1,B,1,,,,{"placement": "block:3"}
  out,N,b3,,E,1,B,1,,,,{"placement": "last"}
)";

// Stages (or chunks) of in, b0..b3, out after assign_stages.
std::vector<int> stages(int pp, int chunks = 1, bool want_chunks = false) {
  Graph g = sheet(kFourBlocks);
  assign_stages(g, pp, 4, chunks);
  std::vector<int> out;
  for (const Tensor& t : g.tensors()) out.push_back(want_chunks ? t.chunk : t.stage);
  return out;
}

using Stages = std::vector<int>;

TEST(PassAssignStages, OneStageHoldsEverything) {
  EXPECT_EQ(stages(1), (Stages{0, 0, 0, 0, 0, 0}));
}

TEST(PassAssignStages, ContiguousBalancedRunsWithEndsOnFirstAndLastStage) {
  //                               in b0 b1 b2 b3 out
  EXPECT_EQ(stages(2), (Stages{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(stages(4), (Stages{0, 0, 1, 2, 3, 3}));
}

TEST(PassAssignStages, EarlierStagesTakeTheRemainder) {
  EXPECT_EQ(stages(3), (Stages{0, 0, 0, 1, 2, 2}));  // 2 + 1 + 1 blocks
}

TEST(PassAssignStages, MoreStagesThanBlocksGiveTheEndsStagesOfTheirOwn) {
  EXPECT_EQ(stages(6), (Stages{0, 1, 2, 3, 4, 5}));
  // Six units (in, b0..b3, out) over five stages: the first takes two.
  EXPECT_EQ(stages(5), (Stages{0, 0, 1, 2, 3, 4}));
}

TEST(PassAssignStages, ChunksAreAssignedRoundRobin) {
  // pp 2 x 2 chunks = 4 virtual stages, one block each; v = c*pp + s.
  EXPECT_EQ(stages(2, 2), (Stages{0, 0, 1, 0, 1, 1}));
  EXPECT_EQ(stages(2, 2, true), (Stages{0, 0, 0, 1, 1, 1}));
  // pp 2 x 3 chunks = 6 virtual stages > 4 blocks: the ends are units too.
  EXPECT_EQ(stages(2, 3), (Stages{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(stages(2, 3, true), (Stages{0, 0, 1, 1, 2, 2}));
}

// ---------------------------------------------------------------------------
// add-weight-updates

// A weight w (dim 0 not split over dp) and its gradient dw, a partial sum
// over dp (it contracts the batch).
const char kWeightAndGradient[] = R"(
  x,N,,,T,,"B/dp, D",1
  w,Y,,,T,,"D, F/tp",1
  y,N,x,w,M,"bd,df->bf","B/dp, D",1,"D, F/tp",1
  dy,N,,,T,,"B/dp, F/tp",1,,,y
  dw,N,dy,x,M,"bf,bd->df","B/dp, F/tp",1,"B/dp, D",1,w
)";

Graph updated(const std::string& rows, int zero_stage, const mesh::Mesh& mesh = dp_tp_mesh()) {
  Graph g = sheet(rows);
  const expr::Values values;
  Analyses analyses(mesh, values);
  AddWeightUpdates(zero_stage).run(g, analyses);
  return g;
}

TEST(PassAddWeightUpdates, EveryWeightGetsWPlusDw) {
  const Graph g = updated(kWeightAndGradient, 0);
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK: dw,N,dy,x,M,
    CHECK-NEXT: w@1,Y,w,dw,A,,"D,F/tp",1,"D,F/tp",1,,
    CHECK-NOT: w@2
  )"));
  const Tensor& u = at(g, "w@1");
  EXPECT_EQ(u.role, graph::Role::kUpdate);
  EXPECT_EQ(u.micro_batch, -1);
  EXPECT_EQ(g.size(), 6u);
}

TEST(PassAddWeightUpdates, Zero1ReducesInFullThenUpdatesADpShardAndGathers) {
  const Graph g = updated(kWeightAndGradient, 1);
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK: dw,N,dy,x,M,
    CHECK-NEXT: dw_reduced,N,dw,,I,,"D,F/tp",1,,,,
    CHECK-NEXT: w@1,Y,w,dw_reduced,A,,"D/dp,F/tp",1,"D/dp,F/tp",1,,
    CHECK-NEXT: w@2,N,w@1,,I,,"D,F/tp",1,,,,
  )"));
}

TEST(PassAddWeightUpdates, Zero2ReadsTheGradientShardedAndGathers) {
  const Graph g = updated(kWeightAndGradient, 2);
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK-NOT: _reduced
    CHECK: dw,N,dy,x,M,
    CHECK-NEXT: w@1,Y,w,dw,A,,"D/dp,F/tp",1,"D/dp,F/tp",1,,
    CHECK-NEXT: w@2,N,w@1,,I,,"D,F/tp",1,,,,
  )"));
}

TEST(PassAddWeightUpdates, ZeroLeavesAWeightAlreadySplitOverDpAlone) {
  const Graph g = updated(R"(
    x,N,,,T,,"B/dp, D",1
    w,Y,,,T,,"D/dp, F",1
    y,N,x,w,M,"bd,df->bf","B/dp, D",1,"D, F",1
    dy,N,,,T,,"B/dp, F",1,,,y
    dw,N,dy,x,M,"bf,bd->df","B/dp, F",1,"B/dp, D",1,w
  )",
                          1);
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK: w@1,Y,w,dw,A,,"D/dp,F",1,"D/dp,F",1,,
    CHECK-NOT: w@2
  )"));
  EXPECT_EQ(g.find("dw_reduced"), -1);
}

TEST(PassAddWeightUpdates, ZeroNeedsADataAxis) {
  const mesh::Mesh tp_only({{"tp", "tp", 2, mesh::AxisKind::kTensor, "--tp"}}, 1);
  EXPECT_THROW(updated(kWeightAndGradient, 1, tp_only), graph::GraphError);
  EXPECT_NO_THROW(updated(kWeightAndGradient, 0, tp_only));
}

// ---------------------------------------------------------------------------
// replicate-micro-batches

TEST(PassReplicateMicroBatches, TwoCopiesSharedWeightsOneAccumulatedGradient) {
  Graph g = sheet(R"(
    x,N,,,T,,"Batch/dp, D",1
    w,Y,,,T,,"D, F",1
    y,N,x,w,M,"bd,df->bf","Batch/dp, D",1,"D, F",1
    dy,N,,,T,,"Batch/dp, F",1,,,y
    dw,N,dy,x,M,"bf,bd->df","Batch/dp, F",1,"Batch/dp, D",1,w
  )");
  const mesh::Mesh mesh = dp_tp_mesh();
  const expr::Values values;
  Analyses analyses(mesh, values);
  ReplicateMicroBatches(2, {{"Batch", Expr::symbol("MicroBatch")}}).run(g, analyses);
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK: w,Y,,,T,,"D,F",1
    CHECK-NEXT: mb0.x,N,,,T,,"MicroBatch/dp,D",1,
    CHECK-NEXT: mb0.y,N,mb0.x,w,M,
    CHECK-NEXT: mb0.dy,N,,,T,,"MicroBatch/dp,F",1,,,mb0.y,
    CHECK-NEXT: mb0.dw,N,mb0.dy,mb0.x,M,
    CHECK-NEXT: mb1.x,N,,,T,,"MicroBatch/dp,D",1,
    CHECK-SAME: ""micro_batch"": 1
    CHECK-NEXT: mb1.y,N,mb1.x,w,M,
    CHECK-NEXT: mb1.dy,N,,,T,,"MicroBatch/dp,F",1,,,mb1.y,
    CHECK-NEXT: mb1.dw,N,mb1.dy,mb1.x,M,
    CHECK-NEXT: dw,N,mb0.dw,,CUSTOM,D*F,"D,F",MicroBatch/dp,"D,F",MicroBatch/dp,w,
    CHECK-SAME: ""data_deps"": [""mb1.dw""]
    CHECK-NOT: mb2.
  )"));
  // One gradient per weight: the per-micro-batch ones are not w's.
  int gradients_of_w = 0;
  for (const Tensor& t : g.tensors()) gradients_of_w += t.grad_of == g.at("w");
  EXPECT_EQ(gradients_of_w, 1);
  EXPECT_EQ(at(g, "dw").grad_of, g.at("w"));
  EXPECT_EQ(at(g, "w").micro_batch, -1);
  // Batch is renamed everywhere (MicroBatch is another symbol).
  for (const Tensor& t : g.tensors()) {
    for (const auto* view : {&t.x1_shape, &t.x1_hidden, &t.x2_shape, &t.x2_hidden}) {
      if (!*view) continue;
      for (const Expr& dim : **view) {
        EXPECT_FALSE(dim.has_symbol("Batch")) << t.id();
      }
    }
  }
}

// ---------------------------------------------------------------------------
// recompute

TEST(PassRecompute, BlockForwardRunsAgainBeforeItsBackward) {
  // Block 0: h (identity of the block input: the checkpoint), a, b forward;
  // g (the gradient entering the block), da, dh backward.
  Graph g = sheet(R"(
    x,N,,,T,,"B, D",1,,,,{"placement": "first"}
    e,N,x,,E,1,"B, D",1,,,,{"placement": "first"}
    w,Y,,,T,,"D, D",1,,,,{"placement": "block:0"}
    h,N,e,,I,,"B, D",1,,,,{"placement": "block:0"}
    a,N,h,w,M,"bd,de->be","B, D",1,"D, D",1,,{"placement": "block:0"}
    b,N,a,,E,1,"B, D",1,,,,{"placement": "block:0"}
    loss,N,b,,E,1,"B, D",1,,,,{"placement": "last"}
    dy,N,,,T,,"B, D",1,,,b,{"placement": "last"}
    g,N,dy,,I,,"B, D",1,,,,{"placement": "block:0"}
    da,N,g,b,E2,1,"B, D",1,"B, D",1,a,{"placement": "block:0"}
    dh,N,da,w,M,"be,de->bd","B, D",1,"D, D",1,h,{"placement": "block:0"}
  )");
  EXPECT_EQ(add_recomputation(g), 2);
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK: a,N,h,w,M,
    CHECK-NEXT: b,N,a,,E,
    CHECK-NEXT: loss,N,b,,E,
    CHECK: da,N,g,recompute.b,E2,
    CHECK-NEXT: dh,N,da,w,M,
    CHECK-NEXT: recompute.a,N,h,w,M,
    CHECK-SAME: ""data_deps"": [""g""]
    CHECK-NEXT: recompute.b,N,recompute.a,,E,
    CHECK-NOT: recompute.
  )"));
  EXPECT_TRUE(at(g, "recompute.a").is_backward());
  EXPECT_TRUE(at(g, "recompute.b").is_backward());
}

// ---------------------------------------------------------------------------
// bind-symbols

TEST(PassBindSymbols, SymbolsAreSubstitutedInViewsAndAttributes) {
  Graph g = sheet(R"(
    w,Y,,,T,,"D/fsdp, F",1
    v,N,w,,I,,"D/gshard, F",1
    k,N,w,,CUSTOM,D*F/fsdp,"D/fsdp, F",1,"D, F",1
  )");
  const mesh::Mesh mesh = dp_tp_mesh();
  const expr::Values values;
  Analyses analyses(mesh, values);
  BindSymbols({{"fsdp", Expr::symbol("dp")}, {"gshard", Expr::constant(1)}}).run(g, analyses);
  EXPECT_TRUE(file_check(ir(g), R"(
    CHECK-NOT: fsdp
    CHECK: w,Y,,,T,,"D/dp,F",1,
    CHECK-NEXT: v,N,w,,I,,"D,F",1,
    CHECK-NEXT: k,N,w,,CUSTOM,D*F/dp,"D/dp,F",1,"D,F",1,
    CHECK-NOT: gshard
  )"));
}

// ---------------------------------------------------------------------------
// PassManager and Analyses

// A pass made of a name and a function, for the manager's own tests.
class LambdaPass : public Pass {
 public:
  LambdaPass(std::string name, std::function<void(Graph&, Analyses&)> body)
      : name_(std::move(name)), body_(std::move(body)) {}
  std::string_view name() const override { return name_; }
  void run(Graph& g, Analyses& a) override { body_(g, a); }

 private:
  std::string name_;
  std::function<void(Graph&, Analyses&)> body_;
};

TEST(PassManager, PrintListsNamesInOrder) {
  PassManager pm;
  pm.emplace<BindSymbols>(std::map<std::string, Expr>{})
      .emplace<AssignStages>(4, 1)
      .emplace<InsertSendRecv>();
  EXPECT_EQ(pm.print(), "1. bind-symbols\n2. assign-stages\n3. insert-send-recv\n");
  EXPECT_EQ(pm.names(),
            (std::vector<std::string>{"bind-symbols", "assign-stages", "insert-send-recv"}));
  EXPECT_TRUE(pm.contains("assign-stages"));
  EXPECT_FALSE(pm.contains("recompute"));
}

TEST(PassManager, ObserverSeesEachPassResultInOrder) {
  Graph g = sheet(R"(
    x,N,,,T,,"B, D/fsdp",1,,,,{"placement": "first"}
    y,N,x,,E,1,"B, D/fsdp",1,,,,{"placement": "last"}
  )");
  PassManager pm;
  pm.emplace<BindSymbols>(std::map<std::string, Expr>{{"fsdp", Expr::symbol("dp")}})
      .emplace<AssignStages>(1, 1)
      .emplace<InsertSendRecv>();
  std::vector<std::string> names, dumps;
  const mesh::Mesh mesh = dp_tp_mesh(2);
  const expr::Values values;
  Analyses analyses(mesh, values);
  pm.run(g, analyses, [&](std::string_view pass, const Graph& after) {
    names.emplace_back(pass);
    dumps.push_back(ir(after));
  });
  ASSERT_EQ(names, (std::vector<std::string>{"bind-symbols", "assign-stages", "insert-send-recv"}));
  EXPECT_TRUE(
      file_check(dumps[0], "CHECK-NOT: fsdp\nCHECK: y,N,x,,E,1,\"B,D/dp\"\nCHECK-NOT: stage"));
  EXPECT_TRUE(
      file_check(dumps[1], "CHECK: y,N,x,,E,\nCHECK-SAME: \"\"stage\"\": 1\nCHECK-NOT: SEND"));
  EXPECT_TRUE(file_check(dumps[2], "CHECK: x.send1,N,x,,SEND,\nCHECK: y,N,shadow_x.recv1,,E,"));
  EXPECT_EQ(ir(g), dumps[2]);
}

TEST(PassManager, GradientOfIsRecomputedAfterEachPass) {
  Graph g = sheet(R"(
    w,Y,,,T,,"D, F",1
  )");
  auto add_gradient = [](Graph& graph, Analyses&) {
    Tensor dw;
    dw.name = "dw";
    dw.x1_shape = graph::parse_shape("D, F");
    dw.x1_hidden = graph::parse_shape("1");
    dw.grad_of = graph.at("w");
    graph.add(std::move(dw));
  };
  int before = -2, after = -2;
  PassManager pm;
  pm.emplace<LambdaPass>("look-before",
                         [&](Graph& graph, Analyses& a) { before = a.gradient_of(graph)[0]; })
      .emplace<LambdaPass>("add-gradient", add_gradient)
      .emplace<LambdaPass>("look-after",
                           [&](Graph& graph, Analyses& a) { after = a.gradient_of(graph)[0]; });
  const mesh::Mesh mesh = dp_tp_mesh();
  const expr::Values values;
  Analyses analyses(mesh, values);
  pm.run(g, analyses);
  EXPECT_EQ(before, -1);
  EXPECT_EQ(after, g.at("dw"));

  // Without the manager the cached analysis is stale until invalidated.
  Graph h = sheet("w,Y,,,T,,\"D, F\",1\n");
  Analyses direct(mesh, values);
  EXPECT_EQ(direct.gradient_of(h)[0], -1);
  add_gradient(h, direct);
  EXPECT_EQ(direct.gradient_of(h)[0], -1);
  direct.invalidate();
  EXPECT_EQ(direct.gradient_of(h)[0], h.at("dw"));
}

// ---------------------------------------------------------------------------
// A ring over a mesh axis, end to end: SEND to the right neighbour on tp and
// RECV from the left one, lowered once and written for every rank.

namespace v4 = ChakraProtoMsg;

// The GlobalMetadata is skipped; the nodes are returned.
std::vector<v4::Node> parse_v4_nodes(const std::string& data) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(data.data()),
                                            static_cast<int>(data.size()));
  std::vector<v4::Node> nodes;
  bool metadata = true;
  while (in.CurrentPosition() < static_cast<int>(data.size())) {
    uint32_t len = 0;
    if (!in.ReadVarint32(&len)) throw std::runtime_error("bad length");
    const auto limit = in.PushLimit(static_cast<int>(len));
    v4::GlobalMetadata meta;
    v4::Node node;
    const bool ok = metadata ? meta.ParseFromCodedStream(&in) : node.ParseFromCodedStream(&in);
    if (!ok || !in.ConsumedEntireMessage()) throw std::runtime_error("bad message");
    in.PopLimit(limit);
    if (!metadata) nodes.push_back(std::move(node));
    metadata = false;
  }
  return nodes;
}

const v4::Node& node_named(const std::vector<v4::Node>& nodes, const std::string& name) {
  for (const v4::Node& n : nodes)
    if (n.name() == name) return n;
  throw std::runtime_error("no node " + name);
}

int64_t int_attr(const v4::Node& n, const std::string& name) {
  for (const auto& a : n.attr()) {
    if (a.name() != name) continue;
    if (a.value_case() == v4::AttributeProto::kInt32Val) return a.int32_val();
    if (a.value_case() == v4::AttributeProto::kInt64Val) return a.int64_val();
  }
  throw std::runtime_error(n.name() + " has no integer attribute " + name);
}

const nlohmann::json& json_node(const nlohmann::json& trace, const std::string& name) {
  for (const nlohmann::json& n : trace.at("nodes"))
    if (n.at("name") == name) return n;
  throw std::runtime_error("no node " + name);
}

// dp 2 x tp 4, one stage: rank = tp*2 + dp; tp groups {0,2,4,6}, {1,3,5,7}.
mesh::Mesh ring_mesh() {
  return mesh::Mesh({{"dp", "dp", 2, mesh::AxisKind::kData, "--dp"},
                     {"tp", "tp", 4, mesh::AxisKind::kTensor, "--tp"}},
                    1);
}
const std::vector<int64_t> kRight = {2, 3, 4, 5, 6, 7, 0, 1};  // by rank
const std::vector<int64_t> kLeft = {6, 7, 0, 1, 2, 3, 4, 5};

// x -> y -> SEND(y) to tp+1; RECV(y) from tp-1 -> z.
StageGraph ring_stage() {
  Graph g;
  g.input("x", "B, D");
  g.elementwise("y", "x", 1, "B, D");
  auto carrier = [&](const std::string& name, Op op, mesh::Peer peer, const std::string& label) {
    const int y = g.at("y");
    Tensor t;
    t.name = name;
    t.op = op;
    t.x1 = y;
    t.x1_shape = g.result(y).y_shape;
    t.x1_hidden = g.result(y).y_hidden;
    t.comm.peer = peer;
    t.comm.tag = 0;
    t.comm.label = label;
    g.add(std::move(t));
  };
  carrier("y.send_right", Op::kSend, mesh::Peer::along(kTp, +1), "y@0_Y_SEND");
  carrier("shadow_y.recv_left", Op::kRecv, mesh::Peer::along(kTp, -1), "shadow_y@0_Y_RECV");
  g.elementwise("z", "shadow_y.recv_left", 1, "B, D");
  std::vector<int> members;
  for (size_t i = 0; i < g.size(); ++i) members.push_back(static_cast<int>(i));
  expr::Values values;
  values.by_symbol = {{"B", 8}, {"D", 16}};
  return lower::lower_stage(g, members, 0, values, lower::LowerOptions{});
}

TEST(RingOverMeshAxis, V004PeersAreTheTpNeighbours) {
  const StageGraph stage = ring_stage();
  const mesh::RankLayout layout(ring_mesh());
  for (int64_t r = 0; r < layout.num_ranks(); ++r) {
    std::string out;
    emit::append_trace(out, stage, layout.binding(r), emit::Schema::kV004);
    const std::vector<v4::Node> nodes = parse_v4_nodes(out);
    const v4::Node& send = node_named(nodes, "y@0_Y_SEND");
    const v4::Node& recv = node_named(nodes, "shadow_y@0_Y_RECV");
    EXPECT_EQ(send.type(), v4::COMM_SEND_NODE);
    EXPECT_EQ(recv.type(), v4::COMM_RECV_NODE);
    EXPECT_EQ(int_attr(send, "comm_dst"), kRight[r]) << "rank " << r;
    EXPECT_EQ(int_attr(recv, "comm_src"), kLeft[r]) << "rank " << r;
    EXPECT_EQ(int_attr(send, "comm_size"), 8 * 16);
    EXPECT_EQ(int_attr(send, "comm_tag"), 0);
    EXPECT_EQ(int_attr(recv, "comm_tag"), 0);
  }
}

TEST(RingOverMeshAxis, JsonPeersAreTheTpNeighbours) {
  const StageGraph stage = ring_stage();
  const mesh::RankLayout layout(ring_mesh());
  for (int64_t r = 0; r < layout.num_ranks(); ++r) {
    std::string out;
    emit::append_trace(out, stage, layout.binding(r), emit::Schema::kJson);
    const nlohmann::json trace = nlohmann::json::parse(out);
    EXPECT_EQ(json_node(trace, "y@0_Y_SEND").at("comm_dst"), kRight[r]) << "rank " << r;
    EXPECT_EQ(json_node(trace, "shadow_y@0_Y_RECV").at("comm_src"), kLeft[r]) << "rank " << r;
  }
}

TEST(RingOverMeshAxis, StageTemplateWritesTheSameBytes) {
  const StageGraph stage = ring_stage();
  const emit::StageTemplate stage_template = emit::stage_template(stage);
  const mesh::RankLayout layout(ring_mesh());
  for (int64_t r = 0; r < layout.num_ranks(); ++r) {
    std::string direct, templated;
    emit::append_trace(direct, stage, layout.binding(r), emit::Schema::kV004);
    stage_template.append_rank(templated, layout.binding(r));
    EXPECT_EQ(templated, direct) << "rank " << r;
  }
}

}  // namespace
}  // namespace stg::passes
