// Memory per rank of a training step from the activation formula of
// Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
// Transformer Models", §4) and mixed precision as Megatron-LM keeps it (the
// report of --framework megatron):
//  - params: the weights the rank holds (from the graph, as sharded), in
//    the trace's --dtype (2 bytes in bf16; fp8 training keeps bf16 weights);
//  - grads: the gradient buffer, in --grad_dtype (fp32: 4 bytes), the
//    weight's size, or its optimizer shard from ZeRO stage 2 on;
//  - optimizer: Adam's two fp32 moments plus an fp32 master copy when the
//    weights are narrower (12 bytes per parameter in bf16), over the
//    parameters the rank updates: its shard under the distributed optimizer
//    (ZeRO 1/2) or FSDP (ZeRO 3), read from the graph's weight-update ops;
//  - activations: the formula of Korthikanti et al. per block and
//    micro-batch (docs/megatron.md "Memory per rank"), times the blocks of
//    the stage and the micro-batches its schedule holds at once, plus the
//    last stage's fp32 logits and the inputs of its final norm and output
//    layer (once per output layer: the model's and each multi-token
//    prediction module's), and gpt's embedding dropout mask on the first
//    stage.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stg/expr/values.h"
#include "stg/graph/graph.h"
#include "stg/lower/schedule.h"
#include "stg/mesh/mesh.h"
#include "stg/options.h"
#include "stg/report/memory.h"

namespace stg::report {

// What one component of a block (its frame, its mixer, its MLP; the rows
// of models/mixers/mixer_row.h) keeps for the backward pass of one
// micro-batch of `seq` tokens of `batch` sequences on a rank, in bytes:
// tensors sequence parallelism splits over tp (`replicated` without it),
// tensors tp splits, tensors held whole on every tp rank, and what full
// recomputation keeps (the block's inputs; sequence-split like `replicated`).
struct ActivationBytes {
  double replicated = 0, split = 0, whole = 0, recomputed = 0;
};
using ActivationTermOf = ActivationBytes (*)(const std::vector<int64_t>& options,
                                             const expr::Values& values, double seq, double batch);
// A component's term: its formula and the block's options of it.
struct ActivationTerm {
  ActivationTermOf of = nullptr;
  std::vector<int64_t> options = {};
  bool operator==(const ActivationTerm&) const = default;
};

// A bound dimension by its symbol, or `fallback` when it is not bound.
inline double bound_value(const expr::Values& values, const std::string& symbol, double fallback) {
  const auto it = values.by_symbol.find(symbol);
  return it == values.by_symbol.end() ? fallback : static_cast<double>(it->second);
}

// One block for the count of Korthikanti et al.: the terms of its
// components, summed (no block kinds known here).
struct BlockActivations {
  std::vector<ActivationTerm> terms;
  bool operator==(const BlockActivations&) const = default;
};

// What the formula needs beyond the mesh and the bound dimensions.
struct ActivationMemoryOptions {
  std::vector<BlockActivations> blocks;  // by block index, the MTP modules' after the model's
  int output_layers = 1;                 // the last stage's: 1 + the MTP depth
  bool embedding_dropout = false;        // gpt's embedding dropout mask (first stage)
  bool sequence_parallel = true;         // --tpsp
  Recompute recompute = Recompute::kNone;
  int weight_bytes = 2;  // --dtype
  int grad_bytes = 4;    // --grad_dtype
  int zero_stage = 0;
  lower::Schedule schedule = lower::Schedule::kNone;
  int micro_batches = 1;
  int chunks = 1;
};

// The activation bytes of one block for one micro-batch on one rank
// (Korthikanti et al.'s formula with a fused attention kernel), from the
// bound model dimensions and the mesh degrees.
double block_activation_bytes(const mesh::Mesh& mesh, const expr::Values& values,
                              const ActivationMemoryOptions& options,
                              const BlockActivations& block);

// The weights' terms of activation_memory_by_stage, in its order (params,
// grads, optimizer of each weight, at `place(weight)`).
std::vector<MemoryTerm> mixed_precision_weight_terms(const graph::Graph& g,
                                                     const ActivationMemoryOptions& options,
                                                     const PlaceOf& place);

// The activation bytes of one micro-batch outside the blocks (Korthikanti
// §4.3): the last stage's fp32 logits and the inputs of its final norm and
// output layer, and gpt's embedding dropout mask on the first stage.
struct EndActivations {
  double logits = 0, last_inputs = 0, first_mask = 0;
};
EndActivations end_activation_bytes(const mesh::Mesh& mesh, const expr::Values& values,
                                    const ActivationMemoryOptions& options);

// `g` after the pass pipeline (stages assigned, weight updates added).
std::vector<StageMemory> activation_memory_by_stage(const graph::Graph& g, const mesh::Mesh& mesh,
                                                    const expr::Values& values,
                                                    const ActivationMemoryOptions& options);

// "memory stage 0 (ranks 0-3): total ... GiB = params ... (Korthikanti et
// al., fused attention)", one line per stage.
std::string format_activation_memory(const std::vector<StageMemory>& stages,
                                     int64_t ranks_per_stage, Recompute recompute);

}  // namespace stg::report
