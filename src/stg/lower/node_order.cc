#include "stg/lower/node_order.h"

#include <functional>
#include <queue>

namespace stg::lower {
namespace {

class IssueOrder {
 public:
  explicit IssueOrder(const IssueGraph& g) : g_(g), n_(g.size()) {}

  std::vector<int> run() {
    removed_.assign(n_, false);
    kind_.assign(n_, NodeKind::kComp);
    deps_start_.assign(n_ + 1, 0);
    for (int i = 0; i < n_; ++i) {
      removed_[i] = g_.removed(i);
      kind_[i] = g_.kind(i);
      if (!removed_[i]) g_.deps(i, deps_);
      deps_start_[i + 1] = deps_.size();
    }
    children_.assign(n_, {});
    remaining_.assign(n_, 0);
    for (int i = 0; i < n_; ++i)
      if (!removed_[i])
        for_each_dep(i, [&](int d) {
          children_[d].push_back(i);
          ++remaining_[i];
        });
    find_pulled();
    blocking_.assign(n_, 0);
    for (int i = 0; i < n_; ++i)
      if (!removed_[i]) for_each_dep(i, [&](int d) { blocking_[i] += pulled_[d] ? 0 : 1; });
    emitted_.assign(n_, false);
    // A SEND or collective of a value no node of this stage produces (its
    // producer did no work and was dropped) goes first.
    for (int i = 0; i < n_; ++i)
      if (!removed_[i] && !is_compute(i) && !pulled_[i] && remaining_[i] == 0 && !emitted_[i])
        emit(i);
    for (int i = 0; i < n_; ++i)
      if (!removed_[i] && is_compute(i) && blocking_[i] == 0) ready_.push(i);
    while (!ready_.empty()) {
      const int c = ready_.top();
      ready_.pop();
      if (emitted_[c]) continue;  // pushed twice: by a zero-input comm node and the scan above
      for_each_dep(c, [&](int d) { pull(d); });
      emit(c);
    }
    // RECVs nobody reads, and what hangs on them.
    for (int i = 0; i < n_; ++i)
      if (!removed_[i] && pulled_[i]) pull(i);
    return std::move(order_);
  }

 private:
  bool is_compute(int i) const { return kind_[i] == NodeKind::kComp; }

  template <typename F>
  void for_each_dep(int i, const F& f) const {
    for (size_t k = deps_start_[i]; k < deps_start_[i + 1]; ++k) f(deps_[k]);
  }

  // Pulled nodes are placed on demand, right before their first consumer:
  // RECVs, and comm nodes that only read pulled nodes (a collective on a
  // received tensor). Every other node waits for its inputs.
  void find_pulled() {
    pulled_.assign(n_, false);
    std::vector<int> pending(remaining_), work;
    for (int i = 0; i < n_; ++i)
      if (!removed_[i] && kind_[i] == NodeKind::kRecv && pending[i] == 0) {
        pulled_[i] = true;
        work.push_back(i);
      }
    while (!work.empty()) {
      const int v = work.back();
      work.pop_back();
      for (int c : children_[v])
        if (!is_compute(c) && --pending[c] == 0) {
          pulled_[c] = true;
          work.push_back(c);
        }
    }
  }

  // Places a pulled node (after the pulled nodes it reads) if not yet placed.
  void pull(int v) {
    if (emitted_[v] || !pulled_[v]) return;
    for_each_dep(v, [&](int d) { pull(d); });
    if (!emitted_[v]) emit(v);
  }

  // Places `v`, then right behind it the comm nodes it completes the inputs
  // of (a SEND of its output, a collective on it, and so on along a chain).
  void emit(int v) {
    order_.push_back(v);
    emitted_[v] = true;
    for (int c : children_[v]) {
      --remaining_[c];
      if (!pulled_[v] && --blocking_[c] == 0 && is_compute(c)) ready_.push(c);
    }
    for (int c : children_[v])
      if (!is_compute(c) && !emitted_[c] && remaining_[c] == 0) emit(c);
  }

  const IssueGraph& g_;
  const int n_;
  std::vector<bool> removed_;
  std::vector<NodeKind> kind_;
  std::vector<int> deps_;           // every node's dependencies, node after node
  std::vector<size_t> deps_start_;  // node i's are deps_[deps_start_[i] .. deps_start_[i+1])
  std::vector<std::vector<int>> children_;
  std::vector<int> remaining_;  // inputs not yet placed
  std::vector<int> blocking_;   // inputs not yet placed that are not pulled
  std::vector<bool> pulled_;
  std::vector<bool> emitted_;
  std::vector<int> order_;
  // Compute nodes whose inputs are placed (or pulled), earliest created first.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready_;
};

}  // namespace

std::vector<int> issue_order(const IssueGraph& g) { return IssueOrder(g).run(); }

namespace {

class LoweredIssueGraph : public IssueGraph {
 public:
  LoweredIssueGraph(const std::vector<LoweredNode>& nodes, const std::vector<bool>& removed)
      : nodes_(nodes), removed_(removed) {}
  int size() const override { return static_cast<int>(nodes_.size()); }
  bool removed(int i) const override { return removed_[i]; }
  NodeKind kind(int i) const override { return nodes_[i].kind; }
  void deps(int i, std::vector<int>& out) const override {
    for (uint64_t d : nodes_[i].data_deps) out.push_back(static_cast<int>(d));
    for (uint64_t d : nodes_[i].ctrl_deps) out.push_back(static_cast<int>(d));
  }

 private:
  const std::vector<LoweredNode>& nodes_;
  const std::vector<bool>& removed_;
};

}  // namespace

std::vector<int> issue_order(const std::vector<LoweredNode>& nodes,
                             const std::vector<bool>& removed) {
  return issue_order(LoweredIssueGraph(nodes, removed));
}

}  // namespace stg::lower
