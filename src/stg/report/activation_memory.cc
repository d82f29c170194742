#include "stg/report/activation_memory.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "stg/mesh/axes.h"

namespace stg::report {

using graph::Role;
using graph::Tensor;

namespace {

double value(const expr::Values& values, const std::string& symbol, double fallback) {
  return bound_value(values, symbol, fallback);
}

double degree(const mesh::Mesh& mesh, mesh::AxisKind kind) {
  const int a = mesh.find(kind);
  return a < 0 ? 1 : static_cast<double>(mesh.axis(a).degree);
}

// Sequences of one micro-batch on one rank: Megatron's micro-batch size.
// stg's MicroBatch is summed over the ranks of the axes that split the
// batch (mesh/axes.h): dp, and ep under Megatron's MoE, which carves expert
// parallelism out of dp (gpt and llama have no ep axis: tp includes it).
double rank_micro_batch(const mesh::Mesh& mesh, const expr::Values& values) {
  const double micro = value(values, "MicroBatch", value(values, "Batch", 1));
  double dp = 1;
  for (const mesh::MeshAxis& a : mesh.axes()) {
    const int row = mesh::find_axis(a.name);
    if (row >= 0 && mesh::kAxes[row].splits_batch) dp *= static_cast<double>(a.degree);
  }
  return micro / dp;
}

}  // namespace

double block_activation_bytes(const mesh::Mesh& mesh, const expr::Values& values,
                              const ActivationMemoryOptions& o, const BlockActivations& block) {
  const double t = degree(mesh, mesh::AxisKind::kTensor);
  const double s = value(values, "Seq", 1) / degree(mesh, mesh::AxisKind::kSequence);
  const double b = rank_micro_batch(mesh, values);
  ActivationBytes sum;
  for (const ActivationTerm& term : block.terms) {
    const ActivationBytes a = term.of(term.options, values, s, b);
    sum.replicated += a.replicated;
    sum.split += a.split;
    sum.whole += a.whole;
    sum.recomputed += a.recomputed;
  }
  if (o.recompute == Recompute::kFull) return sum.recomputed / (o.sequence_parallel ? t : 1);
  // Selective recomputation drops the attention's score matrices
  // (5·a·s²·b), which a fused attention kernel never stores: no change.
  return sum.whole +
         (o.sequence_parallel ? (sum.replicated + sum.split) / t : sum.replicated + sum.split / t);
}

std::vector<MemoryTerm> mixed_precision_weight_terms(const graph::Graph& g,
                                                     const ActivationMemoryOptions& o,
                                                     const PlaceOf& place) {
  using Part = MemoryTerm::Part;
  const int n = static_cast<int>(g.size());
  // The update of each weight holds the parameters the rank's optimizer
  // steps: all of them, or its shard (distributed optimizer, FSDP).
  std::map<int, int> update_of;
  for (int i = 0; i < n; ++i)
    if (g[i].role == Role::kUpdate && g[i].x1 >= 0) update_of[g[i].x1] = i;
  const double optimizer_bytes = 8 + (o.weight_bytes < 4 ? 4 : 0);
  std::vector<MemoryTerm> terms;
  for (int i = 0; i < n; ++i) {
    const Tensor& w = g[i];
    if (w.role != Role::kWeight || w.view) continue;
    const auto u = update_of.find(i);
    const int updated = u == update_of.end() ? i : u->second;
    terms.push_back({Part::kParams, place(i), i, static_cast<double>(o.weight_bytes), false});
    terms.push_back({Part::kGrads, place(i), o.zero_stage >= 2 ? updated : i,
                     static_cast<double>(o.grad_bytes), false});
    terms.push_back({Part::kOptimizer, place(i), updated, optimizer_bytes, false});
  }
  return terms;
}

EndActivations end_activation_bytes(const mesh::Mesh& mesh, const expr::Values& values,
                                    const ActivationMemoryOptions& o) {
  const double t = degree(mesh, mesh::AxisKind::kTensor);
  const double s = value(values, "Seq", 1) / degree(mesh, mesh::AxisKind::kSequence);
  const double b = rank_micro_batch(mesh, values);
  const double sbh = s * b * value(values, "Dmodel", 1);
  const double replicated_t = o.sequence_parallel ? t : 1;
  EndActivations ends;
  // The last stage's fp32 logits (vocabulary-parallel) for the loss, and the
  // inputs of the final norm and of the output layer (Korthikanti §4.3).
  ends.logits = o.output_layers * 4 * s * b * value(values, "Dvocal", 0) / t;
  ends.last_inputs = o.output_layers * 4 * sbh / replicated_t;
  // The first stage: gpt's embedding dropout mask (1 byte per value).
  ends.first_mask = o.embedding_dropout ? sbh / replicated_t : 0;
  return ends;
}

std::vector<StageMemory> activation_memory_by_stage(const graph::Graph& g, const mesh::Mesh& mesh,
                                                    const expr::Values& values,
                                                    const ActivationMemoryOptions& o) {
  const int n = static_cast<int>(g.size());
  const int pp = static_cast<int>(mesh.stages());
  std::vector<StageMemory> stages(pp);
  std::vector<std::set<int>> blocks(pp);
  for (int i = 0; i < n; ++i)
    // A block's weights live on its stage (activations may arrive from a
    // neighbouring stage's block).
    if (g[i].role == Role::kWeight && g[i].placement.kind == graph::Placement::Kind::kBlock)
      blocks[g[i].stage].insert(g[i].placement.block);

  for (const MemoryTerm& t : mixed_precision_weight_terms(g, o, [&](int i) { return g[i].stage; }))
    part_bytes(stages[t.place], t.part) += term_bytes(t, elements(g, t.tensor, values), 1);

  // Blocks of equal bytes are counted together, so that a list of like
  // blocks gives the product count x bytes.
  std::vector<double> bytes_of;  // by block
  std::vector<double> kinds;     // the distinct bytes, in the blocks' order
  for (size_t i = 0; i < o.blocks.size(); ++i) {
    const auto same = std::find(o.blocks.begin(), o.blocks.begin() + i, o.blocks[i]);
    bytes_of.push_back(same == o.blocks.begin() + i
                           ? block_activation_bytes(mesh, values, o, o.blocks[i])
                           : bytes_of[same - o.blocks.begin()]);
    if (std::find(kinds.begin(), kinds.end(), bytes_of.back()) == kinds.end())
      kinds.push_back(bytes_of.back());
  }
  const auto [logits, last_inputs, first_mask] = end_activation_bytes(mesh, values, o);
  for (int st = 0; st < pp; ++st) {
    StageMemory& m = stages[st];
    m.stage = st;
    m.blocks = static_cast<int>(blocks[st].size());
    m.in_flight = lower::activations_in_flight(o.schedule, st, pp, o.micro_batches, o.chunks);
    // The pipeline stages the stage holds: its own and, under DualPipe, the
    // mirrored copy of stage pp-1-st (its blocks are in blocks[st] already).
    double last = st == pp - 1, first = st == 0;
    if (lower::mirrors_model(o.schedule) && pp > 1) {
      last += st == 0;
      first += st == pp - 1;
    }
    m.logits = last * logits * m.in_flight;
    const double ends = last * last_inputs + first * first_mask;
    double held = 0;  // the stage's blocks, kind by kind
    for (const double bytes : kinds) {
      int count = 0;
      for (int block : blocks[st]) count += bytes_of.at(block) == bytes;
      if (count > 0) held += count * bytes;
    }
    m.activations = (held + ends) * m.in_flight + m.logits;
  }
  return stages;
}

namespace {
std::string logits_text(double gib) {
  if (gib == 0) return "";
  char text[64];
  std::snprintf(text, sizeof text, ", of which logits %.3f", gib);
  return text;
}
}  // namespace

std::string format_activation_memory(const std::vector<StageMemory>& stages,
                                     int64_t ranks_per_stage, Recompute recompute) {
  const char* mode = recompute == Recompute::kFull        ? ", full recompute"
                     : recompute == Recompute::kSelective ? ", selective recompute"
                                                          : "";
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  std::string out;
  char line[400];
  for (const StageMemory& m : stages) {
    std::snprintf(line, sizeof line,
                  "memory stage %d (ranks %lld-%lld): total %.3f GiB = params %.3f + grads %.3f + "
                  "optimizer %.3f + activations %.3f (%d blocks x %.2f micro-batches in flight%s; "
                  "Korthikanti et al., fused attention%s)\n",
                  m.stage, static_cast<long long>(m.stage * ranks_per_stage),
                  static_cast<long long>((m.stage + 1) * ranks_per_stage - 1), m.total() / kGiB,
                  m.params / kGiB, m.grads / kGiB, m.optimizer / kGiB, m.activations / kGiB,
                  m.blocks, m.in_flight, logits_text(m.logits / kGiB).c_str(), mode);
    out += line;
  }
  return out;
}

}  // namespace stg::report
