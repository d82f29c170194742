#include "stg/passes/pipeline.h"

#include <algorithm>
#include <map>

namespace stg::passes {

int stage_of_block(int block, int num_blocks, int pp) {
  const int base = num_blocks / pp;
  const int extra = num_blocks % pp;  // the first `extra` stages hold base + 1
  const int big = extra * (base + 1);
  return block < big ? block / (base + 1) : extra + (block - big) / base;
}

PipelinePlan assign_stages(const graph::Graph& g, int pp, int num_blocks, int chunks) {
  using Kind = graph::Placement::Kind;
  PipelinePlan plan;
  plan.pp = pp;
  plan.chunks = chunks;
  const int n = static_cast<int>(g.size());
  plan.stage_of.resize(n);
  plan.chunk_of.resize(n);
  // More stages than blocks: the first and last parts become pipeline units
  // of their own (in, blocks..., out), split contiguously like blocks.
  const bool own_ends = pp * chunks > num_blocks;
  for (int i = 0; i < n; ++i) {
    const graph::Placement& p = g[i].placement;
    const int units = own_ends ? num_blocks + 2 : num_blocks;
    const int unit = own_ends ? (p.kind == Kind::kFirst  ? 0
                                 : p.kind == Kind::kLast ? num_blocks + 1
                                                         : p.block + 1)
                              : p.block;
    const int virtual_stage = !own_ends && p.kind == Kind::kFirst ? 0
                              : !own_ends && p.kind == Kind::kLast
                                  ? pp * chunks - 1
                                  : stage_of_block(unit, units, pp * chunks);
    plan.stage_of[i] = virtual_stage % pp;
    plan.chunk_of[i] = virtual_stage / pp;
  }
  plan.members.resize(pp);
  plan.shadows.resize(pp);
  for (int i = 0; i < n; ++i) plan.members[plan.stage_of[i]].push_back(i);
  int tag = 0;
  for (int s = 0; s < pp; ++s) {
    std::map<int, bool> seen;
    for (int t : plan.members[s]) {
      std::vector<int> inputs = {g[t].x1, g[t].x2};
      inputs.insert(inputs.end(), g[t].extra_deps.begin(), g[t].extra_deps.end());
      for (int in : inputs) {
        if (in < 0 || plan.stage_of[in] == s || seen[in]) continue;
        seen[in] = true;
        plan.shadows[s].push_back(in);
        plan.links.push_back({in, plan.stage_of[in], s, tag++});
      }
    }
  }
  return plan;
}

}  // namespace stg::passes
