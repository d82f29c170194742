#include "stg/emit/network_shape.h"

#include <algorithm>
#include <numeric>

namespace stg::emit {

namespace {

// The largest divisor of n that is at most limit (1 when none is larger).
int64_t largest_divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d >= 2; --d)
    if (n % d == 0) return d;
  return 1;
}

}  // namespace

NetworkShape given_network_shape(std::vector<int64_t> dims, int64_t gpus_per_node) {
  NetworkShape s;
  int64_t span = 1;
  for (int64_t d : dims) {
    span = span > gpus_per_node ? span : span * d;  // stays small: no overflow
    s.in_node.push_back(span <= gpus_per_node);
  }
  s.dims = std::move(dims);
  return s;
}

std::vector<int64_t> ranks_in_domain(const std::vector<PlacedAxis>& axes, int64_t gpus_per_node) {
  std::vector<size_t> order(axes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return axes[a].node_place < axes[b].node_place; });
  std::vector<int64_t> inside(axes.size(), 1);
  int64_t room = gpus_per_node;
  for (size_t i : order) {
    if (axes[i].degree < 2) continue;
    inside[i] = largest_divisor_at_most(axes[i].degree, room);
    room /= inside[i];
    if (inside[i] < axes[i].degree) break;  // the domain is full: later axes are outside
  }
  return inside;
}

NetworkShape default_network_shape(const std::vector<PlacedAxis>& axes, int64_t gpus_per_node) {
  const std::vector<int64_t> inside = ranks_in_domain(axes, gpus_per_node);
  NetworkShape s;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t degree = axes[i].degree;
    if (degree < 2) continue;
    // An axis split in two: its inside coordinate varies faster (mixed radix).
    if (inside[i] > 1) {
      s.dims.push_back(inside[i]);
      s.in_node.push_back(true);
    }
    if (inside[i] < degree) {
      s.dims.push_back(degree / inside[i]);
      s.in_node.push_back(false);
    }
  }
  if (s.dims.size() != 1) return s;
  const int64_t n = s.dims[0];
  const int64_t first = largest_divisor_at_most(n, std::min(gpus_per_node, n / 2));
  if (first < 2) return s;  // prime
  return given_network_shape({first, n / first}, gpus_per_node);
}

}  // namespace stg::emit
