// Sharding states and the one transition table that produces every
// collective (docs/facts.md §3).
//
// With respect to a parallel axis `a`, a tensor seen in (shape, hidden) is
//  - partitioned on the first shape dim whose expression contains `a`'s
//    symbol,
//  - partial-sum if a hidden dim contains the symbol,
//  - duplicated otherwise.
// When the consumer's view differs from the producer's, collectives on the
// axis' group convert one into the other.
#pragma once

#include <string>
#include <vector>

#include "stg/graph/tensor.h"

namespace stg::graph {

// A mesh axis (its index) and the symbol that stands for its degree.
struct AxisSymbol {
  int axis = 0;
  std::string symbol;
};

// How dims are claimed by axes. The seed-era reference lets one dim stand for
// one axis only (`Din/(dp*sp)` is partitioned on dp, duplicated on sp) and
// compares partitioned dims as written; the later reference lets a dim stand
// for every axis in it and compares the dim with the other axes' symbols set
// to 1. stg follows each model's own era so its figures match.
enum class ClaimRule { kOneAxisPerDim, kEveryAxisInDim };

struct ShardingRule {
  // Axes that can carry collectives (degree > 1), in mesh order.
  std::vector<AxisSymbol> axes;
  // Every symbol that stands for a parallel degree: under kEveryAxisInDim a
  // partitioned dim is compared with the other ones set to 1.
  std::vector<std::string> degree_symbols;
  ClaimRule claim = ClaimRule::kOneAxisPerDim;
  // Axes whose collectives of one transition run as one on a group over
  // all of them (mesh::AxisProduct; Megatron-LM's dp x cp gradient
  // reduction): when each of `axes` gets a collective of one type, they
  // become a single one on group index `group`, at the first one's place.
  struct Fused {
    std::vector<int> axes;  // mesh axis indices
    int group = 0;
  };
  std::vector<Fused> fused;
};

struct Collective {
  CollType type;
  int axis;  // mesh axis index
  bool operator==(const Collective&) const = default;
};

// Collectives (in axis order) that turn the producer's view into the
// consumer's. Throws GraphError on a transition that has no collective
// (duplicated or partitioned into partial-sum).
std::vector<Collective> collectives_between(const Shape& from_shape, const Shape& from_hidden,
                                            const Shape& to_shape, const Shape& to_hidden,
                                            const ShardingRule& rule);

}  // namespace stg::graph
