// The sharding transition table (docs/facts.md §3), one test per cell, then
// degree-1 axes, chains and the two claim rules. Each expectation is written
// from the table, not computed by other stg functions.
//
// Views are (shape, hidden) pairs written as text. With respect to tp:
//   duplicated   "B, D"    hidden "1"
//   partitioned  "B, D/tp" (dim 1) or "B/tp, D" (dim 0)
//   partial-sum  "B, D"    hidden "F/tp"
#include "stg/graph/sharding.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "stg/graph/graph.h"
#include "stg/graph/op.h"

namespace stg::graph {

// For readable failures (internal linkage: no clash with other tests).
static void PrintTo(const Collective& c, std::ostream* os) {
  *os << coll_name(c.type) << " on axis " << c.axis;
}

namespace {

constexpr int kDp = 0, kTp = 1, kSp = 2;

// The later models' rule over dp and tp (both of degree > 1).
ShardingRule dp_tp(ClaimRule claim = ClaimRule::kEveryAxisInDim) {
  ShardingRule r;
  r.axes = {{kDp, "dp"}, {kTp, "tp"}};
  r.degree_symbols = {"dp", "tp", "cp", "sp", "ep"};
  r.claim = claim;
  return r;
}

struct View {
  const char* shape;
  const char* hidden = "1";
};

std::vector<Collective> between(View from, View to, const ShardingRule& rule = dp_tp()) {
  return collectives_between(parse_shape(from.shape), parse_shape(from.hidden),
                             parse_shape(to.shape), parse_shape(to.hidden), rule);
}

using Chain = std::vector<Collective>;
const Chain kNothing;

constexpr CollType kAR = CollType::kAllReduce, kAG = CollType::kAllGather,
                   kRS = CollType::kReduceScatter, kA2A = CollType::kAllToAll;

const View kDuplicated{"B, D"};
const View kPartitionedDim1{"B, D/tp"};
const View kPartitionedDim0{"B/tp, D"};
const View kPartial{"B, D", "F/tp"};

// ---- producer duplicated

TEST(ShardingTable, DuplicatedToDuplicatedIsNothing) {
  EXPECT_EQ(between(kDuplicated, kDuplicated), kNothing);
}

TEST(ShardingTable, DuplicatedToPartitionedIsALocalSlice) {
  EXPECT_EQ(between(kDuplicated, kPartitionedDim1), kNothing);
}

TEST(ShardingTable, DuplicatedToPartialSumThrows) {
  EXPECT_THROW(between(kDuplicated, kPartial), GraphError);
}

// ---- producer partitioned

TEST(ShardingTable, PartitionedToDuplicatedIsAllGather) {
  EXPECT_EQ(between(kPartitionedDim1, kDuplicated), (Chain{{kAG, kTp}}));
}

TEST(ShardingTable, PartitionedToSameDimIsNothing) {
  EXPECT_EQ(between(kPartitionedDim1, kPartitionedDim1), kNothing);
}

TEST(ShardingTable, PartitionedToOtherDimIsAllToAll) {
  EXPECT_EQ(between(kPartitionedDim0, kPartitionedDim1), (Chain{{kA2A, kTp}}));
}

// "Same dim" compares the claimed dim expressions, not positions.
TEST(ShardingTable, SameDimIsComparedByExpressionNotPosition) {
  EXPECT_EQ(between({"D/tp, B"}, {"B, D/tp"}), kNothing);
  EXPECT_EQ(between({"B, D/tp"}, {"B, F/tp"}), (Chain{{kA2A, kTp}}));
}

TEST(ShardingTable, PartitionedToPartialSumThrows) {
  EXPECT_THROW(between(kPartitionedDim1, kPartial), GraphError);
}

// ---- producer partial-sum

TEST(ShardingTable, PartialSumToDuplicatedIsAllReduce) {
  EXPECT_EQ(between(kPartial, kDuplicated), (Chain{{kAR, kTp}}));
}

TEST(ShardingTable, PartialSumToPartitionedIsReduceScatter) {
  EXPECT_EQ(between(kPartial, kPartitionedDim1), (Chain{{kRS, kTp}}));
}

TEST(ShardingTable, PartialSumToPartialSumIsNothing) {
  EXPECT_EQ(between(kPartial, kPartial), kNothing);
}

// A partitioned dim wins over a hidden one: shape dims are scanned first.
TEST(ShardingTable, ShapeDimClaimsTheAxisBeforeHiddenDims) {
  EXPECT_EQ(between({"B, D/tp", "F/tp"}, kDuplicated), (Chain{{kAG, kTp}}));
}

// ---- axes of degree 1

TEST(ShardingDegreeOne, AxisNotInTheRuleGivesNothing) {
  ShardingRule dp_only = dp_tp();
  dp_only.axes = {{kDp, "dp"}};  // tp has degree 1
  EXPECT_EQ(between(kPartitionedDim1, kDuplicated, dp_only), kNothing);
  EXPECT_EQ(between(kPartial, kDuplicated, dp_only), kNothing);
  EXPECT_EQ(between(kPartitionedDim0, kPartitionedDim1, dp_only), kNothing);
  // Not even the impossible transitions are checked on it.
  EXPECT_EQ(between(kDuplicated, kPartial, dp_only), kNothing);
}

TEST(ShardingDegreeOne, CollectivesNameTheMeshAxisIndex) {
  ShardingRule dp_sp = dp_tp();
  dp_sp.axes = {{kDp, "dp"}, {kSp, "sp"}};  // tp (axis 1) has degree 1
  EXPECT_EQ(between({"B, S/sp, D/tp"}, {"B, S, D"}, dp_sp), (Chain{{kAG, kSp}}));
}

// ---- chains

TEST(ShardingChain, TwoAxesGiveTwoCollectivesInMeshOrder) {
  EXPECT_EQ(between({"B/dp, D/tp"}, kDuplicated), (Chain{{kAG, kDp}, {kAG, kTp}}));
}

TEST(ShardingChain, MeshOrderNotDimOrder) {
  // tp claims dim 0 and dp dim 1; the chain still starts with dp.
  EXPECT_EQ(between({"B/tp, D/dp"}, kDuplicated), (Chain{{kAG, kDp}, {kAG, kTp}}));
}

TEST(ShardingChain, DifferentTransitionsPerAxis) {
  // An einsum's output partitioned on dp and partial over tp, read whole.
  EXPECT_EQ(between({"B/dp, F", "D/tp"}, kDuplicated), (Chain{{kAG, kDp}, {kAR, kTp}}));
  // The same read with F split over tp.
  EXPECT_EQ(between({"B/dp, F", "D/tp"}, {"B, F/tp"}), (Chain{{kAG, kDp}, {kRS, kTp}}));
}

// ---- claim rules

// Transformer (seed era): axes dp, tp, sp; a weight stored as
// `Din/(dp*sp), Dout/tp` and read whole.
ShardingRule dp_tp_sp(ClaimRule claim) {
  ShardingRule r;
  r.axes = {{kDp, "dp"}, {kTp, "tp"}, {kSp, "sp"}};
  r.degree_symbols = {"dp", "tp", "sp"};
  r.claim = claim;
  return r;
}

TEST(ShardingClaim, OneAxisPerDimLeavesTheSecondAxisOfADimDuplicated) {
  const auto rule = dp_tp_sp(ClaimRule::kOneAxisPerDim);
  // Din/(dp*sp) is partitioned on dp only: no sp gather.
  EXPECT_EQ(between({"Din/(dp*sp), Dout/tp"}, {"Din, Dout"}, rule),
            (Chain{{kAG, kDp}, {kAG, kTp}}));
  // Unless another dim mentions sp.
  EXPECT_EQ(between({"Din/(dp*sp), S/sp"}, {"Din, S"}, rule), (Chain{{kAG, kDp}, {kAG, kSp}}));
}

TEST(ShardingClaim, EveryAxisInDimClaimsBothAxesOfADim) {
  const auto rule = dp_tp_sp(ClaimRule::kEveryAxisInDim);
  EXPECT_EQ(between({"Din/(dp*sp), Dout/tp"}, {"Din, Dout"}, rule),
            (Chain{{kAG, kDp}, {kAG, kTp}, {kAG, kSp}}));
}

TEST(ShardingClaim, OneAxisPerDimComparesDimsAsWritten) {
  const auto rule = dp_tp_sp(ClaimRule::kOneAxisPerDim);
  // dp: "Din/(dp*sp)" vs "Din/dp" differ as written; sp is duplicated on both.
  EXPECT_EQ(between({"Din/(dp*sp), Dout"}, {"Din/dp, Dout"}, rule), (Chain{{kA2A, kDp}}));
}

TEST(ShardingClaim, EveryAxisInDimComparesWithOtherDegreesSetToOne) {
  const auto rule = dp_tp_sp(ClaimRule::kEveryAxisInDim);
  // dp: Din/dp on both sides (sp set to 1): nothing; sp: Din/sp -> duplicated.
  EXPECT_EQ(between({"Din/(dp*sp), Dout"}, {"Din/dp, Dout"}, rule), (Chain{{kAG, kSp}}));
}

TEST(ShardingClaim, DegreeSymbolsOfInactiveAxesAreSetToOneToo) {
  // ep is a degree symbol but not an active axis (degree 1).
  ShardingRule every = dp_tp(ClaimRule::kEveryAxisInDim);
  EXPECT_EQ(between({"B, D/(ep*tp)"}, {"B, D/tp"}, every), kNothing);
  ShardingRule one = dp_tp(ClaimRule::kOneAxisPerDim);
  EXPECT_EQ(between({"B, D/(ep*tp)"}, {"B, D/tp"}, one), (Chain{{kA2A, kTp}}));
}

}  // namespace
}  // namespace stg::graph
