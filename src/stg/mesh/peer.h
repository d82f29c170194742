// The other end of a point-to-point transfer, named relative to the rank
// that sends or receives: the rank with the same spatial coordinates on a
// given pipeline stage, or the rank `offset` steps along a mesh axis (with
// wrap-around) on the same stage, which is what a ring over any axis needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stg::mesh {

struct Peer {
  enum class Kind { kStage, kAxis };
  Kind kind = Kind::kStage;
  int stage = 0;   // kStage
  int axis = 0;    // kAxis: mesh axis index
  int offset = 0;  // kAxis: steps along the axis (negative: backwards)

  static Peer on_stage(int stage) { return {Kind::kStage, stage, 0, 0}; }
  static Peer along(int axis, int offset) { return {Kind::kAxis, 0, axis, offset}; }
  bool operator==(const Peer&) const = default;
  std::string str() const;  // "stage:3" or "axis:1:+1"
};

// Everything a rank's trace needs that differs between the ranks of one
// stage: its group id on each mesh axis and where its peers are.
struct RankBinding {
  int64_t rank = 0;
  // Comm-group id (key of the comm-group file) of the rank's group on each
  // mesh axis; 0 for an axis the binding does not know.
  std::vector<int64_t> group_id;
  // Rank with the same spatial coordinates on each stage (index = stage).
  std::vector<int64_t> rank_on_stage;
  // Per mesh axis: the rank's coordinate, the degree and the rank stride.
  std::vector<int64_t> coord, degree, stride;

  // Group id on `axis`; throws std::out_of_range when unknown.
  int64_t group(int axis) const;
  // The peer's rank; throws std::out_of_range when the binding has no such
  // stage or axis.
  int64_t peer(const Peer& p) const;
};

}  // namespace stg::mesh
