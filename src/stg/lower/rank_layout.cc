#include "stg/lower/rank_layout.h"

#include <algorithm>

namespace stg::lower {

namespace {
int ax(Axis a) { return static_cast<int>(a); }
}  // namespace

RankLayout::RankLayout(int64_t pp, std::array<int64_t, kNumAxes> degrees, std::vector<Axis> axes)
    : pp_(pp), degree_(degrees), axes_(std::move(axes)) {
  for (int a = 0; a < kNumAxes; ++a)
    if (std::find(axes_.begin(), axes_.end(), static_cast<Axis>(a)) == axes_.end()) degree_[a] = 1;
  rank_order_ = axes_;  // dp fastest, then tp, sp, ep
  num_ranks_ = pp_;
  for (Axis a : axes_) num_ranks_ *= degree(a);
}

int64_t RankLayout::rank_of(const Coords& c) const {
  int64_t rank = c.stage;
  for (auto it = rank_order_.rbegin(); it != rank_order_.rend(); ++it)
    rank = rank * degree(*it) + c.index[ax(*it)];
  return rank;
}

Coords RankLayout::coords_of(int64_t rank) const {
  Coords c;
  for (Axis a : rank_order_) {
    c.index[ax(a)] = rank % degree(a);
    rank /= degree(a);
  }
  c.stage = rank;
  return c;
}

int64_t RankLayout::group_id(Axis axis, const Coords& c) const {
  int64_t id = 1;
  for (Axis a : axes_) {
    if (a == axis) break;
    id += num_ranks_ / degree(a);  // number of groups on an earlier axis
  }
  int64_t index = c.stage;  // [stage] + other axes, first outermost
  for (Axis a : axes_) {
    if (a == axis) continue;
    index = index * degree(a) + c.index[ax(a)];
  }
  return id + index;
}

int64_t RankLayout::num_groups() const {
  int64_t n = 0;
  for (Axis a : axes_) n += num_ranks_ / degree(a);
  return n;
}

RankBinding RankLayout::binding(int64_t rank) const {
  RankBinding b;
  b.rank = rank;
  Coords c = coords_of(rank);
  for (Axis a : axes_) b.group_id[ax(a)] = group_id(a, c);
  b.rank_on_stage.resize(pp_);
  for (int64_t s = 0; s < pp_; ++s) {
    c.stage = s;
    b.rank_on_stage[s] = rank_of(c);
  }
  return b;
}

std::string RankLayout::comm_group_json() const {
  std::string out = "{";
  int64_t id = 1;
  for (Axis axis : axes_) {
    // Loop dims: [stage] + other axes, first outermost (slowest).
    std::vector<int64_t> radix = {pp_};
    std::vector<Axis> others;
    for (Axis a : axes_)
      if (a != axis) {
        radix.push_back(degree(a));
        others.push_back(a);
      }
    const int64_t groups = num_ranks_ / degree(axis);
    for (int64_t g = 0; g < groups; ++g, ++id) {
      Coords c;
      int64_t rest = g;
      for (size_t k = others.size(); k-- > 0;) {
        c.index[ax(others[k])] = rest % radix[k + 1];
        rest /= radix[k + 1];
      }
      c.stage = rest;
      if (id > 1) out += ", ";
      out += '"' + std::to_string(id) + "\": [";
      for (int64_t i = 0; i < degree(axis); ++i) {
        c.index[ax(axis)] = i;
        if (i) out += ", ";
        out += std::to_string(rank_of(c));
      }
      out += ']';
    }
  }
  out += '}';
  return out;
}

}  // namespace stg::lower
