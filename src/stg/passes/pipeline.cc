#include "stg/passes/pipeline.h"

#include <algorithm>
#include <limits>

namespace stg::passes {

int stage_of_block(int block, int num_blocks, int pp) {
  const int base = num_blocks / pp;
  const int extra = num_blocks % pp;  // the first `extra` stages hold base + 1
  const int big = extra * (base + 1);
  return block < big ? block / (base + 1) : extra + (block - big) / base;
}

int virtual_stage_of_part(int part, int num_blocks, int virtual_stages) {
  if (virtual_stages > num_blocks) return stage_of_block(part, num_blocks + 2, virtual_stages);
  if (part == 0) return 0;
  if (part == num_blocks + 1) return virtual_stages - 1;
  return stage_of_block(part - 1, num_blocks, virtual_stages);
}

std::vector<int> stages_by_cost(const std::vector<double>& cost, int stages) {
  const int n = static_cast<int>(cost.size());
  std::vector<double> prefix(n + 1, 0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + cost[i];
  // best[s][i]: the least possible most costly stage when the first i
  // units fill s stages; cut[s][i] where the last of them starts.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(stages + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<int>> cut(stages + 1, std::vector<int>(n + 1, 0));
  best[0][0] = 0;
  for (int s = 1; s <= stages; ++s)
    for (int i = s; i <= n; ++i)
      for (int j = s - 1; j < i; ++j) {
        const double worst = std::max(best[s - 1][j], prefix[i] - prefix[j]);
        // Ties go to the later cut: earlier stages take more, as by count.
        if (worst <= best[s][i]) {
          best[s][i] = worst;
          cut[s][i] = j;
        }
      }
  std::vector<int> stage(n, 0);
  for (int s = stages, i = n; s >= 1; i = cut[s][i], --s)
    for (int u = cut[s][i]; u < i; ++u) stage[u] = s - 1;
  return stage;
}

bool placed_with_last(const graph::Placement& p, int num_blocks) {
  using Kind = graph::Placement::Kind;
  return p.kind == Kind::kLast || (p.kind == Kind::kBlock && p.block >= num_blocks);
}

namespace {

// The work of each pipeline unit: its ops' FLOPs (or operation counts),
// the ends added to the first and last block unless they are units.
std::vector<double> unit_costs(const graph::Graph& g, const expr::Values& values, int num_blocks,
                               bool own_ends) {
  using Kind = graph::Placement::Kind;
  std::vector<double> cost(own_ends ? num_blocks + 2 : num_blocks, 0);
  for (size_t i = 0; i < g.size(); ++i) {
    const graph::Tensor& t = g[static_cast<int>(i)];
    const expr::Expr& work = t.flops.is_zero() ? g.result(static_cast<int>(i)).num_ops : t.flops;
    if (work.is_zero()) continue;
    double v = 0;
    try {
      const expr::Rational r = work.evaluate(values.by_symbol);
      v = static_cast<double>(r.num()) / static_cast<double>(r.den());
    } catch (const std::exception&) {
      continue;  // a symbol bound later (e.g. a shard count): not the blocks' work
    }
    const graph::Placement& p = t.placement;
    const int unit = p.kind == Kind::kFirst ? (own_ends ? 0 : 0)
                     : placed_with_last(p, num_blocks)
                         ? (own_ends ? num_blocks + 1 : num_blocks - 1)
                         : p.block + (own_ends ? 1 : 0);
    cost[unit] += v;
  }
  return cost;
}

}  // namespace

void assign_stages(graph::Graph& g, int pp, int num_blocks, int chunks, bool v_shape,
                   const expr::Values* cost_values) {
  using Kind = graph::Placement::Kind;
  // More stages than blocks: the first and last parts become pipeline units
  // of their own (in, blocks..., out), split contiguously like blocks.
  const bool own_ends = pp * chunks > num_blocks;
  std::vector<int> by_cost;
  if (cost_values)
    by_cost = stages_by_cost(unit_costs(g, *cost_values, num_blocks, own_ends), pp * chunks);
  for (size_t i = 0; i < g.size(); ++i) {
    const graph::Placement& p = g[static_cast<int>(i)].placement;
    const bool last = placed_with_last(p, num_blocks);
    const int part = p.kind == Kind::kFirst ? 0 : last ? num_blocks + 1 : p.block + 1;
    // By cost, the ends are units only when they have stages of their own.
    const bool unit_by_cost = cost_values && (own_ends || (p.kind != Kind::kFirst && !last));
    const int virtual_stage = unit_by_cost ? by_cost[own_ends ? part : p.block]
                                           : virtual_stage_of_part(part, num_blocks, pp * chunks);
    // Placement does not enter an op's result: the cached result stays.
    graph::Tensor& t = g.mutable_tensor_keep_result(static_cast<int>(i));
    const bool up = v_shape && virtual_stage >= pp;  // the V's second arm
    t.stage = (up ? 2 * pp - 1 - virtual_stage : virtual_stage % pp) + p.pool * pp;
    t.chunk = virtual_stage / pp;
  }
}

}  // namespace stg::passes
