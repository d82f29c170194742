#include "stg/generate/rank_ranges.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

namespace stg {
namespace {

// One part of --ranks ("A-B" or "A"), or nullopt when it is not one.
std::optional<RankRange> parse_rank_range(std::string_view text) {
  const auto number = [](std::string_view digits) -> std::optional<int64_t> {
    int64_t value = 0;
    if (digits.empty() || digits.size() > 18) return std::nullopt;
    for (char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
      value = value * 10 + (c - '0');
    }
    return value;
  };
  const size_t dash = text.find('-');
  const auto first = number(text.substr(0, dash));
  const auto last = dash == std::string_view::npos ? first : number(text.substr(dash + 1));
  if (!first || !last || *last < *first) return std::nullopt;
  return RankRange{*first, *last};
}

// --ranks "A-B,C,D-E" (inclusive, increasing; adjacent ranges joined), shard
// i of n (contiguous, balanced; may be empty: last < first), or every rank.

}  // namespace

std::vector<RankRange> rank_ranges(const Options& o, int64_t num_ranks) {
  if (o.shard_count > 1 || o.shard_index > 0) {
    require(o.ranks.empty(), "--shard and --ranks both choose the ranks: give only one");
    require(o.shard_count >= 1 && o.shard_index >= 0 && o.shard_index < o.shard_count,
            "--shard " + std::to_string(o.shard_index) + "/" + std::to_string(o.shard_count) +
                " is not valid: use i/n with 0 <= i < n");
    // Shard i holds ranks [i*R/n, (i+1)*R/n): sizes differ by at most one.
    auto start = [&](int64_t i) {
      return static_cast<int64_t>(static_cast<__int128>(i) * num_ranks / o.shard_count);
    };
    return {{start(o.shard_index), start(o.shard_index + 1) - 1}};
  }
  if (o.ranks.empty()) return {{0, num_ranks - 1}};
  std::vector<RankRange> ranges;
  bool valid = true;
  std::string_view rest = o.ranks;
  while (valid) {
    const size_t comma = rest.find(',');
    const auto range = parse_rank_range(rest.substr(0, comma));
    valid = range && range->second < num_ranks &&
            (ranges.empty() || range->first > ranges.back().second);
    if (valid && !ranges.empty() && range->first == ranges.back().second + 1)
      ranges.back().second = range->second;
    else if (valid)
      ranges.push_back(*range);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  require(valid, "--ranks '" + o.ranks +
                     "' is not a list of this run's ranks: use A-B (or A-B,C,D-E in increasing "
                     "order) with 0 <= A <= B <= " +
                     std::to_string(num_ranks - 1));
  return ranges;
}

// --ranks must hold the first rank of every stage: "add 8,16 to --ranks".

void require_first_rank_of_each_stage(const Options& o, const mesh::RankLayout& layout,
                                      const std::vector<RankRange>& ranges) {
  std::string missing;
  for (int64_t stage = 0; stage < layout.pp(); ++stage) {
    const int64_t rank = stage * layout.ranks_per_stage();
    const bool written = std::any_of(ranges.begin(), ranges.end(), [&](const RankRange& r) {
      return r.first <= rank && rank <= r.second;
    });
    if (!written) missing += (missing.empty() ? "" : ",") + std::to_string(rank);
  }
  require(missing.empty(), "--ranks '" + o.ranks +
                               "' leaves out the first rank of a pipeline stage, which "
                               "--print_makespan replays: add " +
                               missing + " to --ranks");
}

}  // namespace stg
