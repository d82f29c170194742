#include "stg/passes/recompute.h"

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

}  // namespace

int add_recomputation(graph::Graph& g, bool selective) {
  const int n = static_cast<int>(g.size());
  std::vector<bool> redo(n, false);
  for (int i = 0; i < n; ++i)
    redo[i] = recomputable(g, i) && (!selective || g[i].selective_recompute);

  // The gradient entering each block: backward tensors of the block fed by
  // a backward tensor outside it.
  std::map<BlockKey, std::vector<int>> entry;
  for (int i = 0; i < n; ++i) {
    const Tensor& t = g[i];
    if (!in_block(t) || !t.is_backward()) continue;
    for (int in : {t.x1, t.x2})
      if (in >= 0 && g[in].is_backward() && (!in_block(g[in]) || key_of(g[in]) != key_of(t)))
        entry[key_of(t)].push_back(i);
  }

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
  int count = 0;
  for (int i = 0; i < n; ++i) {
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
      const auto& gates = entry[key_of(g[i])];
      t.extra_deps.insert(t.extra_deps.end(), gates.begin(), gates.end());
    }
  }
  // The block's backward pass reads its recomputed activations.
  for (int i = 0; i < n; ++i) {
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
  return count;
}

}  // namespace stg::passes
