#include "stg/report/memory.h"

#include <cstdio>
#include <map>
#include <set>

namespace stg::report {

double& part_bytes(StageMemory& m, MemoryTerm::Part part) {
  switch (part) {
    case MemoryTerm::Part::kParams:
      return m.params;
    case MemoryTerm::Part::kGrads:
      return m.grads;
    case MemoryTerm::Part::kOptimizer:
      return m.optimizer;
    case MemoryTerm::Part::kActivations:
      break;
  }
  return m.activations;
}

expr::Expr scaled_bytes(const expr::Expr& elements, double factor) {
  const auto whole = static_cast<int64_t>(factor);
  if (static_cast<double>(whole) != factor)
    throw expr::SizeError("a memory factor that is not whole (" + std::to_string(factor) +
                          " bytes per element) has no exact expression");
  return elements * expr::Expr::constant(whole);
}

double elements(const graph::Graph& g, int t, const expr::Values& values) {
  return static_cast<double>(
      expr::whole_count(expr::product(g.result(t).y_shape), values, "size of " + g[t].id()));
}

using graph::Op;
using graph::Tensor;

namespace {

bool sharded_over(const graph::Graph& g, int t, const std::string& symbol) {
  for (const expr::Expr& dim : g.result(t).y_shape)
    if (dim.has_symbol(symbol)) return true;
  return false;
}

bool through_collective(const graph::Graph& g, int t) {
  for (; t >= 0 && graph::is_comm(g[t].op); t = g[t].x1)
    if (g[t].op == Op::kCollective) return true;
  return false;
}

// An identity that reads its input in the producer's own view (no
// collective between them) is a view, not a new buffer.
bool is_view(const graph::Graph& g, int t) {
  const Tensor& x = g[t];
  if (x.view) return true;
  if (x.op != Op::kIdentity || x.x1 < 0 || through_collective(g, x.x1)) return false;
  const int in = graph::carried(g, x.x1);
  return *x.x1_shape == g.result(in).y_shape && *x.x1_hidden == g.result(in).y_hidden;
}

}  // namespace

std::vector<MemoryTerm> memory_terms(const graph::Graph& g, const mesh::Mesh& mesh,
                                     const MemoryOptions& o, const PlaceOf& place) {
  using Part = MemoryTerm::Part;
  const int n = static_cast<int>(g.size());
  const double param_bytes = o.mixed_precision ? 6 : 4;
  const double act_bytes = o.mixed_precision ? 2 : 4;
  const int data_axis = mesh.find(mesh::AxisKind::kData);
  const std::string dp_symbol = data_axis < 0 ? "" : mesh.axis(data_axis).symbol;
  auto sharded_over_dp = [&](const graph::Graph& graph, int t) {
    return !dp_symbol.empty() && sharded_over(graph, t, dp_symbol);
  };
  const bool has_dp = data_axis >= 0;

  std::vector<MemoryTerm> terms;
  std::map<int, int> grad_of_weight;
  for (int i = 0; i < n; ++i)
    if (g[i].grad_of >= 0 && g[g[i].grad_of].role == graph::Role::kWeight)
      grad_of_weight[g[i].grad_of] = i;
  for (int i = 0; i < n; ++i) {
    const Tensor& t = g[i];
    if (t.role != graph::Role::kWeight) continue;
    const int at = place(i);
    const bool sharded = sharded_over_dp(g, i);
    terms.push_back({Part::kParams, at, i, param_bytes, false});
    terms.push_back({Part::kOptimizer, at, i, 8, has_dp && o.zero_stage >= 1 && !sharded});
    auto grad = grad_of_weight.find(i);
    const bool has_grad = grad != grad_of_weight.end();
    const bool grad_sharded = has_grad && sharded_over_dp(g, grad->second);
    terms.push_back({Part::kGrads, at, has_grad ? grad->second : i, act_bytes,
                     has_dp && o.zero_stage >= 2 && !grad_sharded});
  }
  // Activations of one micro-batch (the first): the forward buffers the
  // backward pass reads, directly or through views. A buffer read at
  // another place is held there too (it arrived by a recv).
  std::set<std::pair<int, int>> kept;  // (buffer, place holding it)
  for (int i = 0; i < n; ++i) {
    const Tensor& t = g[i];
    if (!t.is_backward() || t.micro_batch > 0 || graph::is_comm(t.op)) continue;
    for (int in : {t.x1, t.x2}) {
      in = graph::carried(g, in);
      while (in >= 0 && is_view(g, in) && g[in].op == Op::kIdentity)
        in = graph::carried(g, g[in].x1);
      if (in < 0) continue;
      const Tensor& b = g[in];
      if (b.is_backward() || b.transient || b.micro_batch != 0 ||
          b.role != graph::Role::kActivation || b.op == Op::kPlaceholder || is_view(g, in))
        continue;
      kept.insert({in, place(i)});
    }
  }
  for (const auto& [buffer, at] : kept)
    terms.push_back({Part::kActivations, at, buffer, act_bytes, false});
  return terms;
}

std::vector<StageMemory> memory_by_stage(const graph::Graph& g, const mesh::Mesh& mesh,
                                         const expr::Values& values, const MemoryOptions& o) {
  const int pp = static_cast<int>(mesh.stages());
  std::vector<StageMemory> stages(pp);
  for (int s = 0; s < pp; ++s) {
    stages[s].stage = s;
    stages[s].in_flight =
        lower::activations_in_flight(o.schedule, s, pp, o.micro_batches, o.chunks);
  }
  const int data_axis = mesh.find(mesh::AxisKind::kData);
  const double dp = data_axis < 0 ? 1 : static_cast<double>(mesh.axis(data_axis).degree);
  for (const MemoryTerm& t : memory_terms(g, mesh, o, [&](int i) { return g[i].stage; }))
    part_bytes(stages[t.place], t.part) += term_bytes(t, elements(g, t.tensor, values), dp);
  for (StageMemory& m : stages) m.activations *= m.in_flight;
  return stages;
}

std::string format_memory(const std::vector<StageMemory>& stages, int64_t ranks_per_stage) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  std::string out;
  char line[320];
  for (const StageMemory& m : stages) {
    std::snprintf(line, sizeof line,
                  "memory stage %d (ranks %lld-%lld): total %.3f GiB = params %.3f + grads %.3f + "
                  "optimizer %.3f + activations %.3f (%.2f micro-batches in flight)\n",
                  m.stage, static_cast<long long>(m.stage * ranks_per_stage),
                  static_cast<long long>((m.stage + 1) * ranks_per_stage - 1), m.total() / kGiB,
                  m.params / kGiB, m.grads / kGiB, m.optimizer / kGiB, m.activations / kGiB,
                  m.in_flight);
    out += line;
  }
  return out;
}

}  // namespace stg::report
