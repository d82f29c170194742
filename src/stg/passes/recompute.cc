#include "stg/passes/recompute.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

namespace stg::passes {

using graph::Op;
using graph::Tensor;

namespace {

using BlockKey = std::pair<int, int>;  // (block, micro-batch)

bool in_block(const Tensor& t) { return t.placement.kind == graph::Placement::Kind::kBlock; }
BlockKey key_of(const Tensor& t) { return {t.placement.block, t.micro_batch}; }

// Forward work of a block that the backward pass would otherwise keep:
// everything forward except placeholders, weights and their FSDP views, and
// identities that forward the block's input (the checkpoint).
bool recomputable(const graph::Graph& g, int i) {
  const Tensor& t = g[i];
  if (!in_block(t) || t.is_backward() || t.transient || t.require_grads) return false;
  if (t.op == Op::kPlaceholder || t.op == Op::kShadow) return false;
  if (t.view) return false;
  if (t.op == Op::kIdentity && (t.x1 < 0 || !in_block(g[t.x1]) || key_of(g[t.x1]) != key_of(t)))
    return false;  // the checkpoint
  return true;
}

// Activation checkpointing's order (recompute.h): per (block, micro-batch),
// the region's first backward tensors (gradients of recomputed tensors that
// no other such gradient precedes) and what they read of the backward (the
// gradients of the region's outputs, where the recomputation starts).
struct RegionBackward {
  std::vector<int> first, gates;
};

std::map<BlockKey, RegionBackward> region_backward(const graph::Graph& g,
                                                   const std::vector<bool>& redo) {
  const int n = static_cast<int>(g.size());
  std::vector<std::vector<int>> children(n);
  auto inputs = [&](int i, auto&& f) {
    for (int in : {g[i].x1, g[i].x2})
      if (in >= 0) f(in);
    for (int d : g[i].extra_deps) f(d);
  };
  for (int i = 0; i < n; ++i) inputs(i, [&](int in) { children[in].push_back(i); });
  // The region's backward: gradients of recomputed tensors of the same block.
  std::vector<bool> grad_of_region(n, false), below(n, false);
  std::vector<int> work;
  for (int i = 0; i < n; ++i) {
    const Tensor& t = g[i];
    if (in_block(t) && t.is_backward() && t.grad_of >= 0 && redo[t.grad_of] &&
        key_of(g[t.grad_of]) == key_of(t)) {
      grad_of_region[i] = true;
      work.push_back(i);
    }
  }
  // Tensors of the same block after one of them (not counting it).
  auto same_block = [&](int a, int b) { return in_block(g[b]) && key_of(g[b]) == key_of(g[a]); };
  std::vector<int> seeds = work;
  work.clear();
  for (int s : seeds)
    for (int c : children[s])
      if (same_block(s, c)) work.push_back(c);
  while (!work.empty()) {
    const int v = work.back();
    work.pop_back();
    if (below[v]) continue;
    below[v] = true;
    for (int c : children[v])
      if (same_block(v, c)) work.push_back(c);
  }
  std::map<BlockKey, RegionBackward> out;
  for (int i = 0; i < n; ++i) {
    if (!grad_of_region[i] || below[i]) continue;
    RegionBackward& r = out[key_of(g[i])];
    r.first.push_back(i);
    inputs(i, [&](int in) {
      if (g[in].is_backward()) r.gates.push_back(in);
    });
  }
  return out;
}

// The tensors to recompute: all recomputable ones, or (selective) the
// ones marked selective_recompute.
std::vector<bool> recomputed(const graph::Graph& g, bool selective) {
  const int n = static_cast<int>(g.size());
  std::vector<bool> redo(n, false);
  for (int i = 0; i < n; ++i)
    redo[i] = recomputable(g, i) && (!selective || g[i].selective_recompute);
  return redo;
}

// The gradient entering each block: backward tensors of the block fed by
// a backward tensor outside it.
std::map<BlockKey, std::vector<int>> block_entries(const graph::Graph& g) {
  std::map<BlockKey, std::vector<int>> entry;
  for (int i = 0; i < static_cast<int>(g.size()); ++i) {
    const Tensor& t = g[i];
    if (!in_block(t) || !t.is_backward()) continue;
    for (int in : {t.x1, t.x2})
      if (in >= 0 && g[in].is_backward() && (!in_block(g[in]) || key_of(g[in]) != key_of(t)))
        entry[key_of(t)].push_back(i);
  }
  return entry;
}

// A backward copy "recompute.<name>" of each tensor to redo; returns where
// each tensor's copy is (-1: none).
std::vector<int> add_copies(graph::Graph& g, const std::vector<bool>& redo) {
  const int n = static_cast<int>(g.size());
  std::vector<int> copy(n, -1);
  for (int i = 0; i < n; ++i) {
    if (!redo[i]) continue;
    Tensor t = g[i];
    const std::string prefix = "recompute.";
    t.name = prefix + t.name;
    t.number_at = graph::number_after(t.number_at, prefix.size());
    t.phase = graph::Phase::kBackwardInput;  // it runs in the backward pass
    t.grad_of = -1;
    copy[i] = g.add(std::move(t));
  }
  return copy;
}

// The copies read each other; a copy that reads no other copy (a root)
// waits for `gates(block)`. Returns the number of copies.
template <typename Gates>
int wire_copies(graph::Graph& g, const std::vector<int>& copy, const Gates& gates_of) {
  int count = 0;
  for (int i = 0; i < static_cast<int>(copy.size()); ++i) {
    if (copy[i] < 0) continue;
    ++count;
    Tensor& t = g.mutable_tensor(copy[i]);
    bool root = true;
    auto remap = [&](int& ref) {
      if (ref >= 0 && copy[ref] >= 0) {
        ref = copy[ref];
        root = false;
      }
    };
    remap(t.x1);
    remap(t.x2);
    for (int& d : t.extra_deps) remap(d);
    if (root) {
      const auto& gates = gates_of(key_of(g[i]));
      t.extra_deps.insert(t.extra_deps.end(), gates.begin(), gates.end());
    }
  }
  return count;
}

// The block's backward pass reads its recomputed activations.
void read_copies(graph::Graph& g, const std::vector<int>& copy) {
  for (int i = 0; i < static_cast<int>(copy.size()); ++i) {
    if (!g[i].is_backward() || !in_block(g[i])) continue;
    const BlockKey block = key_of(g[i]);
    Tensor& t = g.mutable_tensor(i);
    auto redirect = [&](int& ref) {
      if (ref >= 0 && copy[ref] >= 0 && key_of(g[ref]) == block) ref = copy[ref];
    };
    redirect(t.x1);
    redirect(t.x2);
    for (int& d : t.extra_deps) redirect(d);
  }
}

// Checkpointed: the region's first backward tensors wait for the whole
// recomputed region (its copies no other copy reads).
void wait_for_regions(graph::Graph& g, const std::vector<int>& copy,
                      const std::map<BlockKey, RegionBackward>& region) {
  const int n = static_cast<int>(copy.size());
  for (const auto& [key, r] : region) {
    if (r.gates.empty()) continue;
    std::vector<bool> read(g.size(), false);
    std::vector<int> sinks;
    for (int i = 0; i < n; ++i)
      if (copy[i] >= 0 && key_of(g[i]) == key) {
        const Tensor& c = g[copy[i]];
        for (int in : {c.x1, c.x2})
          if (in >= 0) read[in] = true;
        for (int d : c.extra_deps) read[d] = true;
      }
    for (int i = 0; i < n; ++i)
      if (copy[i] >= 0 && key_of(g[i]) == key && !read[copy[i]]) sinks.push_back(copy[i]);
    for (int e : r.first) {
      std::vector<int>& deps = g.mutable_tensor(e).extra_deps;
      deps.insert(deps.end(), sinks.begin(), sinks.end());
    }
  }
}

// Checkpointed: the recomputed region is created where its backward
// starts (right before the first of its first backward tensors), so that
// it is issued with the backward it belongs to, not after all the work
// created before it (lower/node_order.h issues ready compute in creation
// order).
void move_regions_to_backward(graph::Graph& g, const std::vector<int>& copy,
                              const std::map<BlockKey, RegionBackward>& region) {
  const int n = static_cast<int>(copy.size());
  std::vector<std::vector<int>> before(n);
  std::vector<bool> moved(g.size(), false);
  for (int i = 0; i < n; ++i) {
    if (copy[i] < 0) continue;
    const auto it = region.find(key_of(g[i]));
    if (it == region.end() || it->second.gates.empty()) continue;
    const int anchor = *std::min_element(it->second.first.begin(), it->second.first.end());
    before[anchor].push_back(copy[i]);
    moved[copy[i]] = true;
  }
  std::vector<int> order;
  order.reserve(g.size());
  for (int i = 0; i < static_cast<int>(g.size()); ++i) {
    if (i < n) order.insert(order.end(), before[i].begin(), before[i].end());
    if (!moved[i]) order.push_back(i);
  }
  g.permute(order);
}

}  // namespace

int add_recomputation(graph::Graph& g, bool selective, bool checkpointed) {
  const std::vector<bool> redo = recomputed(g, selective);
  std::map<BlockKey, std::vector<int>> entry = block_entries(g);
  // Checkpointed: the recomputation starts at the gradients of the region's
  // outputs, and the region's backward waits for it (below).
  std::map<BlockKey, RegionBackward> region;
  if (checkpointed) region = region_backward(g, redo);
  auto gates_of = [&](const BlockKey& key) -> const std::vector<int>& {
    const auto it = region.find(key);
    return it != region.end() && !it->second.gates.empty() ? it->second.gates : entry[key];
  };
  const std::vector<int> copy = add_copies(g, redo);
  const int count = wire_copies(g, copy, gates_of);
  read_copies(g, copy);
  wait_for_regions(g, copy, region);
  if (checkpointed && count > 0) move_regions_to_backward(g, copy, region);
  return count;
}

}  // namespace stg::passes
