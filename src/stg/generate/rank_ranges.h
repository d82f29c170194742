// The ranks a run writes (--ranks, --shard, or every rank).
#pragma once

#include <cstdint>
#include <vector>

#include "stg/generate.h"
#include "stg/mesh/rank_layout.h"
#include "stg/options.h"

namespace stg {

// --ranks "A-B,C,D-E" (inclusive, increasing; adjacent ranges joined), shard
// i of n (contiguous, balanced; may be empty: last < first), or every rank.
std::vector<RankRange> rank_ranges(const Options& o, int64_t num_ranks);

// --ranks must hold the first rank of every stage: "add 8,16 to --ranks".
void require_first_rank_of_each_stage(const Options& o, const mesh::RankLayout& layout,
                                      const std::vector<RankRange>& ranges);

}  // namespace stg
