// emit/network_shape.h: which network dimensions lie inside a scale-up
// domain. Expected shapes are worked out by hand from Megatron-LM's rank
// order (tp, cp, ep, dp, pp fill a node in that order).
#include "stg/emit/network_shape.h"

#include <gtest/gtest.h>

namespace stg::emit {
namespace {

// Node places as in mesh/axes.h: tp 0, cp 1, ep 2, dp 3, pp 4. Axes are
// given in stg's rank order: dp, tp, cp, ep, then the stages.
constexpr int kTp = 0, kCp = 1, kEp = 2, kDp = 3, kPp = 4;

struct Case {
  const char* what;
  std::vector<PlacedAxis> axes;
  int64_t gpus_per_node;
  std::vector<int64_t> dims;
  std::vector<bool> in_node;
};

TEST(NetworkShape, NodesHoldWholeTensorParallelGroupsFirst) {
  const Case cases[] = {
      {"dp2 tp2 pp2 fit one node",
       {{2, kDp}, {2, kTp}, {2, kPp}},
       8,
       {2, 2, 2},
       {true, true, true}},
      {"Llama 3 405B: dp128 tp8 pp16",
       {{128, kDp}, {8, kTp}, {16, kPp}},
       8,
       {128, 8, 16},
       {false, true, false}},
      {"dp4 tp4: 2 of dp inside", {{4, kDp}, {4, kTp}}, 8, {2, 2, 4}, {true, false, true}},
      {"tp2 cp2 dp8: cp inside, then 2 of dp",
       {{8, kDp}, {2, kTp}, {2, kCp}},
       8,
       {2, 4, 2, 2},
       {true, false, true, true}},
      {"ep64 alone: 8 inside, 8 across", {{64, kEp}}, 8, {8, 8}, {true, false}},
      {"dp16 alone", {{16, kDp}}, 8, {8, 2}, {true, false}},
      {"dp8 alone: one node, split in two dimensions", {{8, kDp}}, 8, {4, 2}, {true, true}},
      {"dp7: prime, one dimension", {{7, kDp}}, 8, {7}, {true}},
      {"tp3 dp4: 3 does not divide the node; dp's 2 inside",
       {{4, kDp}, {3, kTp}},
       8,
       {2, 2, 3},
       {true, false, true}},
      {"tp16 larger than a node", {{2, kDp}, {16, kTp}}, 8, {2, 8, 2}, {false, true, false}},
      {"degree-1 axes leave no dimension",
       {{1, kDp}, {4, kTp}, {1, kCp}, {2, kPp}},
       4,
       {4, 2},
       {true, false}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const NetworkShape s = default_network_shape(c.axes, c.gpus_per_node);
    EXPECT_EQ(s.dims, c.dims);
    EXPECT_EQ(s.in_node, c.in_node);
  }
}

TEST(NetworkShape, ADomainHoldsTheAxesInNodeOrder) {
  // tp 8 fills an 8-GPU node: cp, dp and pp have one rank each in it.
  EXPECT_EQ(ranks_in_domain({{4, kDp}, {8, kTp}, {2, kCp}, {2, kPp}}, 8),
            (std::vector<int64_t>{1, 8, 1, 1}));
  // tp 2 then cp 2 leave room for 2 of dp's 16; pp stays outside.
  EXPECT_EQ(ranks_in_domain({{16, kDp}, {2, kTp}, {2, kCp}, {4, kPp}}, 8),
            (std::vector<int64_t>{2, 2, 2, 1}));
  // tp 3 leaves 8 / 3 = 2 GPUs: dp 4 has 2 inside.
  EXPECT_EQ(ranks_in_domain({{4, kDp}, {3, kTp}}, 8), (std::vector<int64_t>{2, 3}));
  // tp 16 overflows the node: 8 of it inside, nothing of the later axes.
  EXPECT_EQ(ranks_in_domain({{2, kDp}, {16, kTp}}, 8), (std::vector<int64_t>{1, 8}));
}

TEST(NetworkShape, GivenDimensionsAreInsideWhileTheirSpanFitsANode) {
  NetworkShape s = given_network_shape({2, 4, 4}, 8);
  EXPECT_EQ(s.in_node, (std::vector<bool>{true, true, false}));
  s = given_network_shape({16, 2}, 8);
  EXPECT_EQ(s.in_node, (std::vector<bool>{false, false}));
  // Spans far beyond a node do not overflow.
  s = given_network_shape({1 << 20, 1 << 20, 1 << 20, 1 << 20}, 8);
  EXPECT_EQ(s.in_node, (std::vector<bool>(4, false)));
}

}  // namespace
}  // namespace stg::emit
