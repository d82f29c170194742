#include "stg/graph/sharding.h"

#include <algorithm>
#include <map>
#include <optional>

#include "stg/graph/op.h"

namespace stg::graph {
namespace {

enum class State { kDuplicated, kPartitioned, kPartial };

struct AxisState {
  State state = State::kDuplicated;
  expr::Expr dim;  // the partitioned (or partial) dim, as compared
};

// States of every axis for one view of a tensor.
std::vector<AxisState> states_of(const Shape& shape, const Shape& hidden,
                                 const ShardingRule& rule) {
  const std::vector<AxisSymbol>& axes = rule.axes;
  std::vector<AxisState> states(axes.size());
  std::vector<bool> claimed(axes.size(), false);
  auto claim = [&](const Shape& dims, State state) {
    for (const expr::Expr& dim : dims) {
      for (size_t a = 0; a < axes.size(); ++a) {
        if (claimed[a] || !dim.has_symbol(axes[a].symbol)) continue;
        claimed[a] = true;
        if (rule.claim == ClaimRule::kOneAxisPerDim) {
          states[a] = {state, dim};
          break;
        }
        std::map<std::string, expr::Expr> others;
        for (const std::string& s : rule.degree_symbols)
          if (s != axes[a].symbol) others[s] = expr::Expr::constant(1);
        states[a] = {state, dim.substitute(others)};
      }
    }
  };
  claim(shape, State::kPartitioned);
  claim(hidden, State::kPartial);
  return states;
}

}  // namespace

std::vector<Collective> collectives_between(const Shape& from_shape, const Shape& from_hidden,
                                            const Shape& to_shape, const Shape& to_hidden,
                                            const ShardingRule& rule) {
  const std::vector<AxisSymbol>& axes = rule.axes;
  const auto from = states_of(from_shape, from_hidden, rule);
  const auto to = states_of(to_shape, to_hidden, rule);
  std::vector<Collective> out;
  for (size_t a = 0; a < axes.size(); ++a) {
    const int axis = axes[a].axis;
    switch (from[a].state) {
      case State::kDuplicated:
        if (to[a].state == State::kPartial)
          throw GraphError("a duplicated tensor cannot become partial-sum on " + axes[a].symbol);
        break;  // duplicated -> duplicated or a local slice: nothing to send
      case State::kPartitioned:
        if (to[a].state == State::kDuplicated) {
          out.push_back({CollType::kAllGather, axis});
        } else if (to[a].state == State::kPartitioned) {
          if (!(from[a].dim == to[a].dim)) out.push_back({CollType::kAllToAll, axis});
        } else {
          throw GraphError("a partitioned tensor cannot become partial-sum on " + axes[a].symbol);
        }
        break;
      case State::kPartial:
        if (to[a].state == State::kDuplicated) {
          out.push_back({CollType::kAllReduce, axis});
        } else if (to[a].state == State::kPartitioned) {
          out.push_back({CollType::kReduceScatter, axis});
        }
        break;  // partial -> partial: the consumer accumulates
    }
  }
  for (const ShardingRule::Fused& f : rule.fused) {
    std::vector<size_t> at;
    for (size_t i = 0; i < out.size(); ++i)
      if (std::find(f.axes.begin(), f.axes.end(), out[i].axis) != f.axes.end()) at.push_back(i);
    if (at.size() != f.axes.size()) continue;
    const CollType type = out[at[0]].type;
    if (!std::all_of(at.begin(), at.end(), [&](size_t i) { return out[i].type == type; })) continue;
    out[at[0]].axis = f.group;
    for (size_t k = at.size(); k-- > 1;)
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(at[k]));
  }
  return out;
}

}  // namespace stg::graph
