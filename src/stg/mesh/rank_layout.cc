#include "stg/mesh/rank_layout.h"

#include <algorithm>

namespace stg::mesh {

RankLayout::RankLayout(const Mesh& mesh) : mesh_(mesh) {}

int64_t RankLayout::rank_of(const Coords& c) const {
  int64_t rank = c.stage;
  for (int a = mesh_.size() - 1; a >= 0; --a) rank = rank * degree(a) + c.index[a];
  return rank;
}

Coords RankLayout::coords_of(int64_t rank) const {
  Coords c;
  c.index.resize(mesh_.size());
  for (int a = 0; a < mesh_.size(); ++a) {
    c.index[a] = rank % degree(a);
    rank /= degree(a);
  }
  c.stage = rank;
  return c;
}

int64_t RankLayout::group_id(int axis, const Coords& c) const {
  int64_t id = 1;
  for (int a = 0; a < axis; ++a) id += num_ranks() / degree(a);  // groups of earlier axes
  int64_t index = c.stage;  // [stage] + other axes, first outermost
  for (int a = 0; a < mesh_.size(); ++a)
    if (a != axis) index = index * degree(a) + c.index[a];
  return id + index;
}

int64_t RankLayout::axis_groups() const {
  int64_t n = 0;
  for (int a = 0; a < mesh_.size(); ++a) n += num_ranks() / degree(a);
  return n;
}

int64_t RankLayout::product_degree(const AxisProduct& p) const {
  int64_t d = 1;
  for (int a : p.axes) d *= degree(a);
  return d;
}

int64_t RankLayout::product_group_id(size_t k, const Coords& c) const {
  int64_t id =
      1 + axis_groups() + static_cast<int64_t>(mesh_.stage_groups().size()) * ranks_per_stage();
  for (size_t j = 0; j < k; ++j) id += num_ranks() / product_degree(mesh_.axis_products()[j]);
  const std::vector<int>& in = mesh_.axis_products()[k].axes;
  int64_t index = c.stage;  // [stage] + the other axes, first outermost
  for (int a = 0; a < mesh_.size(); ++a)
    if (std::find(in.begin(), in.end(), a) == in.end()) index = index * degree(a) + c.index[a];
  return id + index;
}

int64_t RankLayout::num_groups() const {
  int64_t n = axis_groups() + static_cast<int64_t>(mesh_.stage_groups().size()) * ranks_per_stage();
  for (const AxisProduct& p : mesh_.axis_products()) n += num_ranks() / product_degree(p);
  return n;
}

RankBinding RankLayout::binding(int64_t rank) const {
  RankBinding b;
  b.rank = rank;
  Coords c = coords_of(rank);
  int64_t stride = 1;
  for (int a = 0; a < mesh_.size(); ++a) {
    b.group_id.push_back(group_id(a, c));
    b.coord.push_back(c.index[a]);
    b.degree.push_back(degree(a));
    b.stride.push_back(stride);
    stride *= degree(a);
  }
  // A stage group holds the rank only if the rank is on one of its stages.
  const int64_t position = rank % ranks_per_stage();
  for (size_t k = 0; k < mesh_.stage_groups().size(); ++k) {
    const std::vector<int64_t>& stages = mesh_.stage_groups()[k].stages;
    const bool member = std::find(stages.begin(), stages.end(), c.stage) != stages.end();
    b.group_id.push_back(
        member ? axis_groups() + 1 + static_cast<int64_t>(k) * ranks_per_stage() + position : 0);
  }
  for (size_t k = 0; k < mesh_.axis_products().size(); ++k)
    b.group_id.push_back(product_group_id(k, c));
  b.rank_on_stage.resize(pp());
  for (int64_t s = 0; s < pp(); ++s) {
    c.stage = s;
    b.rank_on_stage[s] = rank_of(c);
  }
  return b;
}

// The groups over the mesh axes `axes` (one axis, or an axis product), as
// {"id": [ranks], ...} entries from `id` on: groups in [stage] + the other
// axes order, first outermost; members with the group's axes, the first
// fastest (rank order).
void RankLayout::append_groups(const std::vector<int>& axes, int64_t& id, std::string& out) const {
  std::vector<int> others;
  int64_t size = 1;
  for (int a = 0; a < mesh_.size(); ++a) {
    if (std::find(axes.begin(), axes.end(), a) == axes.end())
      others.push_back(a);
    else
      size *= degree(a);
  }
  const int64_t groups = num_ranks() / size;
  Coords c;
  c.index.resize(mesh_.size());
  for (int64_t g = 0; g < groups; ++g, ++id) {
    int64_t rest = g;
    for (size_t k = others.size(); k-- > 0;) {
      c.index[others[k]] = rest % degree(others[k]);
      rest /= degree(others[k]);
    }
    c.stage = rest;
    if (id > 1) out += ", ";
    out += '"' + std::to_string(id) + "\": [";
    for (int64_t i = 0; i < size; ++i) {
      int64_t m = i;
      for (int a : axes) {
        c.index[a] = m % degree(a);
        m /= degree(a);
      }
      if (i) out += ", ";
      out += std::to_string(rank_of(c));
    }
    out += ']';
  }
}

std::string RankLayout::comm_group_json() const {
  std::string out = "{";
  int64_t id = 1;
  for (int axis = 0; axis < mesh_.size(); ++axis) append_groups({axis}, id, out);
  for (const StageGroup& group : mesh_.stage_groups()) {
    for (int64_t position = 0; position < ranks_per_stage(); ++position, ++id) {
      if (id > 1) out += ", ";
      out += '"' + std::to_string(id) + "\": [";
      for (size_t i = 0; i < group.stages.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(group.stages[i] * ranks_per_stage() + position);
      }
      out += ']';
    }
  }
  for (const AxisProduct& p : mesh_.axis_products()) append_groups(p.axes, id, out);
  out += '}';
  return out;
}

}  // namespace stg::mesh
