// Rank numbering and communicator groups (DESIGN.md §6), by arithmetic on
// rank coordinates: nothing here searches or stores all ranks.
//
//   rank = (((stage*EP + ep)*SP + sp)*TP + tp)*DP + dp
//
// Group ids start at 1: for each spatial axis D in the order dp, tp, sp
// (, ep), one group per assignment of the other coordinates, enumerated as
// nested loops over [stage] + (spatial axes without D), first outermost.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "stg/lower/stage_graph.h"

namespace stg::lower {

struct Coords {
  int64_t stage = 0;
  std::array<int64_t, kNumAxes> index{};  // by Axis
};

class RankLayout {
 public:
  // `degree` by Axis; `axes` are the spatial axes of this run in group order
  // (dp, tp, sp, and ep only where ep is its own rank axis).
  RankLayout(int64_t pp, std::array<int64_t, kNumAxes> degree, std::vector<Axis> axes);

  int64_t num_ranks() const { return num_ranks_; }
  int64_t ranks_per_stage() const { return num_ranks_ / pp_; }
  int64_t pp() const { return pp_; }
  int64_t degree(Axis a) const { return degree_[static_cast<int>(a)]; }
  const std::vector<Axis>& axes() const { return axes_; }

  int64_t rank_of(const Coords& c) const;
  Coords coords_of(int64_t rank) const;

  // Id of the group on `axis` that holds the rank at `c`.
  int64_t group_id(Axis axis, const Coords& c) const;
  int64_t num_groups() const;

  // Everything a rank's trace needs that differs between ranks of a stage.
  RankBinding binding(int64_t rank) const;

  // The comm-group file: {"1": [0, 1], ...} on one line, Python json.dump
  // separators, no trailing newline.
  std::string comm_group_json() const;

 private:
  int64_t pp_;
  std::array<int64_t, kNumAxes> degree_;
  std::vector<Axis> axes_;  // group order
  std::vector<Axis> rank_order_;  // fastest first: dp, tp, sp, ep
  int64_t num_ranks_;
};

}  // namespace stg::lower
