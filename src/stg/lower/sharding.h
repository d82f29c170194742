// Sharding states and the one transition table that produces every
// collective (DESIGN.md §4).
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
#include "stg/lower/stage_graph.h"

namespace stg::lower {

struct AxisSymbol {
  Axis axis;
  std::string symbol;
};

// How dims are claimed by axes. The seed-era reference lets one dim stand for
// one axis only (`Din/(dp*sp)` is partitioned on dp, duplicated on sp) and
// compares partitioned dims as written; the later reference lets a dim stand
// for every axis in it and compares the dim with the other axes' symbols set
// to 1. stg follows each model's own era so its figures match.
enum class ClaimRule { kOneAxisPerDim, kEveryAxisInDim };

struct Collective {
  CollType type;
  Axis axis;
};

// Collectives (in axis order) that turn the producer's view into the
// consumer's. `axes` holds only axes of degree > 1, in group order. Throws
// graph::GraphError on a transition that has no collective (duplicated or
// partitioned into partial-sum).
std::vector<Collective> collectives_between(const graph::Shape& from_shape,
                                            const graph::Shape& from_hidden,
                                            const graph::Shape& to_shape,
                                            const graph::Shape& to_hidden,
                                            const std::vector<AxisSymbol>& axes,
                                            ClaimRule rule = ClaimRule::kOneAxisPerDim);

}  // namespace stg::lower
