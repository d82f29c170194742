#include "stg/tools/group_axes.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "stg/mesh/axes.h"

namespace stg::tools {
namespace {

using Group = std::pair<std::string, std::vector<int64_t>>;

// Decimal ids in numeric order without parsing them (any length).
bool id_less(const std::string& a, const std::string& b) {
  auto digits = [](const std::string& s) {
    const size_t first = s.find_first_not_of('0');
    return first == std::string::npos ? std::string() : s.substr(first);
  };
  const std::string x = digits(a), y = digits(b);
  return x.size() != y.size() ? x.size() < y.size() : x < y;
}

// Whether groups[begin, begin + N/degree) are N/degree groups of `degree`
// ranks that hold every rank 0..N-1 once.
bool is_block(const std::vector<const Group*>& groups, size_t begin, int64_t degree, int64_t n) {
  if (degree < 1 || n % degree != 0) return false;
  const size_t count = static_cast<size_t>(n / degree);
  if (begin + count > groups.size()) return false;
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (size_t g = begin; g < begin + count; ++g) {
    const std::vector<int64_t>& members = groups[g]->second;
    if (static_cast<int64_t>(members.size()) != degree) return false;
    for (int64_t r : members) {
      if (r < 0 || r >= n || seen[static_cast<size_t>(r)]) return false;
      seen[static_cast<size_t>(r)] = true;
    }
  }
  return true;
}

}  // namespace

std::map<std::string, std::string> group_axes(const CommGroups& comm_groups,
                                              int64_t ranks_per_stage) {
  std::vector<const Group*> groups;
  int64_t n = 0;
  for (const Group& g : comm_groups.groups) {
    groups.push_back(&g);
    for (int64_t r : g.second) n = std::max(n, r + 1);
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group* a, const Group* b) { return id_less(a->first, b->first); });
  std::map<std::string, std::string> axes;
  if (n == 0) {  // no ranks: no layout to read
    for (const Group* g : groups) axes.emplace(g->first, "other");
    return axes;
  }
  const int64_t per_stage = ranks_per_stage >= 1 && ranks_per_stage <= n ? ranks_per_stage : n;

  constexpr auto kSpatial = mesh::mesh_labels();  // dp, tp, cp, ep
  size_t next = 0;
  int64_t product = 1;
  std::map<std::string, int64_t> degree_of;
  for (const char* name : kSpatial) {
    if (next >= groups.size()) break;
    const int64_t degree = static_cast<int64_t>(groups[next]->second.size());
    if (degree < 1) break;
    if (degree != 1 && (product >= per_stage || per_stage % (product * degree) != 0)) break;
    if (!is_block(groups, next, degree, n)) break;
    for (size_t end = next + static_cast<size_t>(n / degree); next < end; ++next)
      axes.emplace(groups[next]->first, name);
    product *= degree;
    degree_of[name] = degree;
  }
  // Megatron's dp x cp gradient groups: a block of groups of dp·cp ranks.
  const int64_t dp_cp =
      degree_of.count("dp") && degree_of.count("cp") && degree_of["dp"] > 1 && degree_of["cp"] > 1
          ? degree_of["dp"] * degree_of["cp"]
          : 0;

  const int64_t last_stage = n / per_stage - 1;
  // Pairs of ranks at one position on stages s and last-s: 0 the ends, 1 a
  // pair of other stages, -1 none.
  auto mirrored_pair = [&](const std::vector<int64_t>& m) {
    if (m.size() != 2 || last_stage == 0) return -1;
    const int64_t a = std::min(m[0], m[1]), b = std::max(m[0], m[1]);
    if (a % per_stage != b % per_stage || a / per_stage + b / per_stage != last_stage) return -1;
    return a / per_stage == 0 ? 0 : 1;
  };
  using Pair = std::pair<int64_t, int64_t>;
  auto pair_of = [](const std::vector<int64_t>& m) {
    return Pair{std::min(m[0], m[1]), std::max(m[0], m[1])};
  };
  std::map<Pair, int> end_pairs;  // the ends' pairs: how often each is listed
  bool dualpipe = false;
  for (size_t k = next; k < groups.size(); ++k) {
    const int kind = mirrored_pair(groups[k]->second);
    if (kind == 1) dualpipe = true;
    if (kind == 0 && ++end_pairs[pair_of(groups[k]->second)] > 1) dualpipe = true;
  }
  std::map<Pair, int> seen;  // the ends' pairs named so far
  for (; next < groups.size(); ++next) {
    const std::vector<int64_t>& m = groups[next]->second;
    if (dp_cp > 0 && static_cast<int64_t>(m.size()) == dp_cp && is_block(groups, next, dp_cp, n)) {
      for (size_t end = next + static_cast<size_t>(n / dp_cp); next < end; ++next)
        axes.emplace(groups[next]->first, "dp x cp");
      --next;
      continue;
    }
    const int kind = mirrored_pair(m);
    std::string name = "other";
    if (kind == 1) name = "dualpipe";
    if (kind == 0) {
      // An end pair listed twice: the embedding group, then DualPipe's.
      const Pair pair = pair_of(m);
      const bool twice = end_pairs[pair] > 1;
      name = dualpipe && (!twice || seen[pair]++ > 0) ? "dualpipe" : "embedding";
    }
    axes.emplace(groups[next]->first, name);
  }
  return axes;
}

}  // namespace stg::tools
