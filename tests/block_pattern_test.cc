// BlockPattern (models/blocks/block_pattern.h): the blocks a family or a
// row lays a component out on, expanded as stated.
#include "stg/models/blocks/block_pattern.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

using stg::models::BlockPattern;

TEST(BlockPattern, FirstBlocksThenTheRest) {
  // DeepSeek-V3: the first 3 of 8 blocks dense.
  EXPECT_EQ(BlockPattern{.first = 3}.expand(8),
            (std::vector<bool>{true, true, true, false, false, false, false, false}));
  EXPECT_EQ(BlockPattern{}.expand(3), (std::vector<bool>{false, false, false}));
}

TEST(BlockPattern, EveryNthFromAnOffset) {
  // Gemma 2's global attention every 2nd block (blocks 1, 3, 5), Jamba's
  // attention every 8th from block 4.
  EXPECT_EQ((BlockPattern{.period = 2, .offset = 1}.expand(6)),
            (std::vector<bool>{false, true, false, true, false, true}));
  const std::vector<bool> jamba = BlockPattern{.period = 8, .offset = 4}.expand(16);
  for (size_t i = 0; i < jamba.size(); ++i) EXPECT_EQ(jamba[i], i == 4 || i == 12) << i;
}

TEST(BlockPattern, BlocksTakeTheirSpecs) {
  stg::models::BlockSpec dense, moe;
  moe.mlp_options = {1};
  const std::vector<stg::models::BlockSpec> blocks = BlockPattern{.first = 1}.blocks(3, dense, moe);
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0], dense);
  EXPECT_EQ(blocks[1], moe);
  EXPECT_EQ(blocks[2], moe);
}

}  // namespace
