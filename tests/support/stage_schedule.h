// The tests' own pipeline order and issue order of a lowered stage, as the
// full expansion needs them (support/full_expansion.h): an independent
// implementation of what lower::FlatStage derives for the run (the
// schedule's ctrl_deps from each step's last compute nodes to the next
// step's first ones; then the nodes renumbered in issue order).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "stg/lower/lower_stage.h"
#include "stg/lower/node_order.h"
#include "stg/lower/schedule.h"
#include "stg/util/graph_algo.h"

namespace stg_test {

// Step index of each node in the stage's schedule, -1 if in none.
inline std::vector<int> step_of_nodes(const stg::StageGraph& s,
                                      const std::vector<stg::lower::Step>& steps,
                                      bool separate_weight_gradients = false) {
  std::vector<int> out(s.nodes.size(), -1);
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const stg::LoweredNode& n = s.nodes[i];
    if (n.kind != stg::NodeKind::kComp || !n.scheduled) continue;
    const stg::lower::Step step{stg::lower::step_phase(n.phase, separate_weight_gradients),
                                n.phase_step, n.micro_batch, n.chunk};
    for (size_t k = 0; k < steps.size(); ++k)
      if (steps[k] == step) out[i] = static_cast<int>(k);
  }
  return out;
}

// ctrl_deps from the last compute nodes of each step (no later compute node
// of the step after them) to the first compute nodes of the next step that
// has work on this stage. The steps: the pipeline schedule's, or a
// workload's phases, each for every micro-batch.
inline void add_schedule_ctrl_deps(stg::StageGraph& s, const stg::lower::LowerOptions& o, int pp,
                                   const std::vector<stg::lower::Step>& phases = {}) {
  if (o.schedule == stg::lower::Schedule() && phases.empty()) return;
  std::vector<stg::lower::Step> steps;
  for (const stg::lower::Step& phase : phases)
    for (int mb = 0; mb < o.micro_batches; ++mb) {
      steps.push_back(phase);
      steps.back().micro_batch = mb;
    }
  if (phases.empty())
    steps = stg::lower::replica_steps(o.schedule, s.stage, pp, o.micro_batches, o.chunks);
  const std::vector<int> step_of =
      step_of_nodes(s, steps, stg::lower::separates_weight_gradients(o.schedule));
  const int n = static_cast<int>(s.nodes.size());
  std::vector<std::vector<int>> children(n);
  for (int i = 0; i < n; ++i)
    for (uint64_t d : s.nodes[i].data_deps) children[d].push_back(i);
  const std::vector<int> order = stg::util::topological_order(children);
  // Per node, the steps reachable after and before it (not counting it).
  std::vector<std::vector<bool>> after(n, std::vector<bool>(steps.size())), before = after;
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (int c : children[*it]) {
      for (size_t k = 0; k < steps.size(); ++k) after[*it][k] = after[*it][k] || after[c][k];
      if (step_of[c] >= 0) after[*it][step_of[c]] = true;
    }
  for (int v : order)
    for (int c : children[v]) {
      for (size_t k = 0; k < steps.size(); ++k) before[c][k] = before[c][k] || before[v][k];
      if (step_of[v] >= 0) before[c][step_of[v]] = true;
    }
  std::vector<std::vector<int>> sinks(steps.size()), sources(steps.size());
  for (int v : order) {
    const int k = step_of[v];
    if (k < 0) continue;
    if (!after[v][k]) sinks[k].push_back(v);
    if (!before[v][k]) sources[k].push_back(v);
  }
  int previous = -1;
  for (size_t k = 0; k < steps.size(); ++k) {
    if (sinks[k].empty()) continue;
    if (previous >= 0)
      for (int v : sources[k])
        for (int u : sinks[previous]) s.nodes[v].ctrl_deps.push_back(static_cast<uint64_t>(u));
    previous = static_cast<int>(k);
  }
  for (stg::LoweredNode& node : s.nodes) std::sort(node.ctrl_deps.begin(), node.ctrl_deps.end());
}

// The stage renumbered in issue order (lower/node_order.h).
inline void renumber_in_issue_order(stg::StageGraph& s) {
  const std::vector<int> order =
      stg::lower::issue_order(s.nodes, std::vector<bool>(s.nodes.size(), false));
  std::vector<uint64_t> new_id(s.nodes.size());
  for (size_t k = 0; k < order.size(); ++k) new_id[order[k]] = k;
  std::vector<stg::LoweredNode> nodes;
  for (int i : order) nodes.push_back(std::move(s.nodes[i]));
  for (size_t k = 0; k < nodes.size(); ++k) {
    nodes[k].id = k;
    for (auto* deps : {&nodes[k].data_deps, &nodes[k].ctrl_deps})
      for (uint64_t& d : *deps) d = new_id[d];
    std::sort(nodes[k].ctrl_deps.begin(), nodes[k].ctrl_deps.end());
  }
  s.nodes = std::move(nodes);
}

// A stage lowered in reference order, with the run's schedule (over `pp`
// stages) and order.
inline void schedule_and_order(stg::StageGraph& s, const stg::lower::LowerOptions& o, int pp,
                               const std::vector<stg::lower::Step>& phases = {}) {
  add_schedule_ctrl_deps(s, o, pp, phases);
  if (o.order == stg::lower::NodeOrder::kIssue) renumber_in_issue_order(s);
}

}  // namespace stg_test
