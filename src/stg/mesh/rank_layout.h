// Rank numbering and communicator groups (docs/facts.md §4), by arithmetic
// on rank coordinates: nothing here searches or stores all ranks.
//
//   rank = ((stage*D[k-1] + c[k-1])*D[k-2] + ...)*D[0] + c[0]
//
// over the mesh axes 0..k-1 (axis 0 varies fastest). Group ids start at 1:
// for each mesh axis A in mesh order, one group per assignment of the other
// coordinates, enumerated as nested loops over [stage] + (axes without A),
// first outermost; members are listed by A's coordinate. Then, for each stage
// group (mesh.h), one group per rank position of a stage, in that order,
// members listed by stage. Then, for each axis product (mesh.h), one group
// per assignment of the other coordinates, enumerated as for an axis,
// members in rank order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stg/mesh/mesh.h"
#include "stg/mesh/peer.h"

namespace stg::mesh {

struct Coords {
  int64_t stage = 0;
  std::vector<int64_t> index;  // by mesh axis
};

class RankLayout {
 public:
  explicit RankLayout(const Mesh& mesh);

  int64_t num_ranks() const { return mesh_.num_ranks(); }
  int64_t ranks_per_stage() const { return mesh_.ranks_per_stage(); }
  int64_t pp() const { return mesh_.stages(); }
  const Mesh& mesh() const { return mesh_; }

  int64_t rank_of(const Coords& c) const;
  Coords coords_of(int64_t rank) const;

  // Id of the group on mesh axis `axis` that holds the rank at `c`.
  int64_t group_id(int axis, const Coords& c) const;
  int64_t num_groups() const;

  // Everything a rank's trace needs that differs between ranks of a stage.
  RankBinding binding(int64_t rank) const;

  // The comm-group file: {"1": [0, 1], ...} on one line, Python json.dump
  // separators, no trailing newline.
  std::string comm_group_json() const;

 private:
  int64_t degree(int axis) const { return mesh_.axis(axis).degree; }
  int64_t axis_groups() const;  // groups of all mesh axes
  int64_t product_degree(const AxisProduct& p) const;
  // Id of the group of axis product k that holds the rank at `c`.
  int64_t product_group_id(size_t k, const Coords& c) const;
  void append_groups(const std::vector<int>& axes, int64_t& id, std::string& out) const;

  Mesh mesh_;
};

}  // namespace stg::mesh
