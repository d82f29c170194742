#include "stg/passes/insertion.h"

namespace stg::passes {

Insertions::Insertions(graph::Graph& g)
    : g_(g), original_(g.size()), before_(g.size()), after_(g.size()) {}

int Insertions::before(int anchor, graph::Tensor t) {
  const int i = g_.add(std::move(t));
  before_.at(anchor).push_back(i);
  return i;
}

int Insertions::after(int anchor, graph::Tensor t) {
  const int i = g_.add(std::move(t));
  after_.at(anchor).push_back(i);
  return i;
}

int Insertions::after(int anchor, graph::Tensor t, std::shared_ptr<const graph::OpResult> known) {
  const int i = g_.add(std::move(t), std::move(known));
  after_.at(anchor).push_back(i);
  return i;
}

void Insertions::apply() {
  if (g_.size() == original_) return;
  std::vector<int> order;
  order.reserve(g_.size());
  for (size_t i = 0; i < original_; ++i) {
    order.insert(order.end(), before_[i].begin(), before_[i].end());
    order.push_back(static_cast<int>(i));
    order.insert(order.end(), after_[i].begin(), after_[i].end());
  }
  g_.permute(order);
}

}  // namespace stg::passes
