#include "stg/mesh/peer.h"

#include <stdexcept>

namespace stg::mesh {

std::string Peer::str() const {
  if (kind == Kind::kStage) return "stage:" + std::to_string(stage);
  return "axis:" + std::to_string(axis) + ":" + (offset >= 0 ? "+" : "") + std::to_string(offset);
}

int64_t RankBinding::group(int axis) const {
  if (axis < 0 || static_cast<size_t>(axis) >= group_id.size())
    throw std::out_of_range("rank " + std::to_string(rank) + " has no group on mesh axis " +
                            std::to_string(axis));
  return group_id[static_cast<size_t>(axis)];
}

int64_t RankBinding::peer(const Peer& p) const {
  if (p.kind == Peer::Kind::kStage) {
    if (p.stage < 0 || static_cast<size_t>(p.stage) >= rank_on_stage.size())
      throw std::out_of_range("rank " + std::to_string(rank) + " has no peer on stage " +
                              std::to_string(p.stage));
    return rank_on_stage[static_cast<size_t>(p.stage)];
  }
  const auto a = static_cast<size_t>(p.axis);
  if (p.axis < 0 || a >= coord.size() || a >= degree.size() || a >= stride.size())
    throw std::out_of_range("rank " + std::to_string(rank) + " has no peer on mesh axis " +
                            std::to_string(p.axis));
  const int64_t d = degree[a];
  const int64_t to = ((coord[a] + p.offset) % d + d) % d;
  return rank + (to - coord[a]) * stride[a];
}

}  // namespace stg::mesh
