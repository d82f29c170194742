// The parallel axis of every group of a comm-group file, read from the file
// alone: stg's layout (docs/facts.md §4) has one block of groups per spatial
// axis (dp, tp, cp, ep), in that order, with ids from 1; a block of an axis
// of degree d holds N/d groups of d ranks (singletons too). Megatron's
// tied-embedding groups (one per rank position of a stage, pairing the first
// and the last stage), DualPipe's groups of the two copies of a stage's
// parameters (pairing stages s and pp-1-s) and Megatron's dp x cp gradient
// groups (a block of groups of dp·cp ranks) follow the blocks.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "stg/tools/trace_reader.h"

namespace stg::tools {

// Axis names: "dp", "tp", "cp", "ep", "embedding", "dualpipe", "dp x cp",
// "other".
//
// `ranks_per_stage` (R) tells the blocks of the spatial axes from what
// follows them; pass the number of ranks N when the traces have no
// SEND/RECV, else the smallest rank distance of a SEND/RECV (the pipeline
// peers of a rank are multiples of R away). Blocks are taken in id order
// as dp, tp, cp, ep while the product of their degrees is below R, and
// blocks of singletons whatever the product; a block that is not a
// partition of the N ranks ends the walk. Of the remaining groups, a pair
// of ranks at the same position on stages s and pp-1-s is "dualpipe" when
// the file has DualPipe's groups (a pair of other stages than the first and
// the last, or two groups of every such pair of theirs: Megatron's embedding
// group comes first), else, on the first and the last stage, "embedding";
// anything else is "other". (At pp 2 DualPipe's groups without an embedding
// group look like embedding groups and are named so.)
//
// Total: every group gets a name, whatever the input. N is one more than
// the largest member; an R outside 1..N counts as N.
std::map<std::string, std::string> group_axes(const CommGroups& groups, int64_t ranks_per_stage);

}  // namespace stg::tools
