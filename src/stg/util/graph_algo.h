// Small graph utilities shared across the tree: Kahn's topological order
// over an adjacency list (any order, or the stable order that takes the
// smallest index first among ready nodes), a cycle check, and the 64-bit
// hash mixer used by the tools' hashes and digests.
//
// An adjacency is anything `children` with `children.size()` nodes where
// `children[i]` is a range of node indices (the nodes that depend on i):
// std::vector<std::vector<int>>, or the compressed CsrAdjacency below. An
// edge listed twice counts twice, which keeps the in-degrees consistent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <queue>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace stg::util {

// SplitMix64's finaliser: a bijection on 64 bits with good avalanche.
constexpr uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Children of node i are targets[offsets[i] .. offsets[i + 1]); offsets has
// one entry more than there are nodes.
struct CsrAdjacency {
  std::span<const uint32_t> offsets;
  std::span<const uint32_t> targets;

  size_t size() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  std::span<const uint32_t> operator[](size_t i) const {
    return targets.subspan(offsets[i], offsets[i + 1] - offsets[i]);
  }
};

namespace detail {

template <class Adjacency>
using NodeIndex = std::remove_cvref_t<decltype(*std::begin(std::declval<const Adjacency&>()[0]))>;

template <class Adjacency>
std::vector<uint32_t> in_degrees(const Adjacency& children) {
  std::vector<uint32_t> indeg(children.size(), 0);
  for (size_t i = 0; i < children.size(); ++i)
    for (auto c : children[i]) ++indeg[static_cast<size_t>(c)];
  return indeg;
}

// Kahn's algorithm with `Ready` (a stack or a min-heap) holding the ready
// nodes. Nodes for which keep(i) is false are never started (they must have
// no edges into kept nodes).
template <class Ready, class Adjacency, class Keep>
std::vector<NodeIndex<Adjacency>> kahn(const Adjacency& children, const Keep& keep) {
  using Index = NodeIndex<Adjacency>;
  std::vector<uint32_t> pending = in_degrees(children);
  std::vector<Index> order;
  order.reserve(children.size());
  Ready ready;
  constexpr bool kHeap = requires(Ready & r) { r.top(); };
  auto push = [&ready](Index v) {
    if constexpr (kHeap) {
      ready.push(v);
    } else {
      ready.push_back(v);
    }
  };
  auto pop = [&ready] {
    if constexpr (kHeap) {
      const Index v = ready.top();
      ready.pop();
      return v;
    } else {
      const Index v = ready.back();
      ready.pop_back();
      return v;
    }
  };
  for (size_t i = 0; i < children.size(); ++i)
    if (pending[i] == 0 && keep(i)) push(static_cast<Index>(i));
  while (!ready.empty()) {
    const Index v = pop();
    order.push_back(v);
    for (auto c : children[static_cast<size_t>(v)])
      if (--pending[static_cast<size_t>(c)] == 0) push(static_cast<Index>(c));
  }
  return order;
}

struct KeepAll {
  bool operator()(size_t) const { return true; }
};

}  // namespace detail

// A topological order (parents before children) in no particular order
// among independent nodes. On a cycle, the order stops short: the nodes on
// or behind a cycle are left out.
template <class Adjacency, class Keep = detail::KeepAll>
std::vector<detail::NodeIndex<Adjacency>> topological_order(const Adjacency& children,
                                                            const Keep& keep = {}) {
  using Index = detail::NodeIndex<Adjacency>;
  return detail::kahn<std::vector<Index>>(children, keep);
}

// The stable topological order: among the ready nodes the one with the
// smallest index comes first, so the result depends only on the graph and
// its numbering (e.g. file position), never on how edges are stored. Stops
// short on a cycle like topological_order.
template <class Adjacency, class Keep = detail::KeepAll>
std::vector<detail::NodeIndex<Adjacency>> stable_topological_order(const Adjacency& children,
                                                                   const Keep& keep = {}) {
  using Index = detail::NodeIndex<Adjacency>;
  using MinHeap = std::priority_queue<Index, std::vector<Index>, std::greater<Index>>;
  return detail::kahn<MinHeap>(children, keep);
}

// Whether the graph has a dependency cycle (a self edge counts).
template <class Adjacency>
bool has_cycle(const Adjacency& children) {
  return topological_order(children).size() < children.size();
}

}  // namespace stg::util
