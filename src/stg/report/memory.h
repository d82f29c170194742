// Per-rank memory footprint of a training step, from the graph: what a rank
// of each pipeline stage keeps resident.
//  - params: its weights (as sharded); fp32 (4 bytes), or with mixed
//    precision a bf16 copy plus an fp32 master (6 bytes);
//  - grads: its weight gradients; 4 bytes, 2 with mixed precision; divided
//    over dp from ZeRO stage 2 on (already sharded in the graph for FSDP);
//  - optimizer: Adam's two fp32 moments (8 bytes per parameter), divided
//    over dp from ZeRO stage 1 on;
//  - activations: forward outputs that the backward pass reads (with
//    recomputation only the block inputs), 4 bytes (2 with mixed precision)
//    per element, times the micro-batches the schedule keeps in flight.
#pragma once

#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "stg/expr/values.h"
#include "stg/graph/graph.h"
#include "stg/lower/schedule.h"
#include "stg/mesh/mesh.h"

namespace stg::report {

struct MemoryOptions {
  bool mixed_precision = false;
  int zero_stage = 0;
  lower::Schedule schedule = lower::Schedule::kNone;
  int micro_batches = 1;
  int chunks = 1;  // virtual stages per stage (interleaved)
};

struct StageMemory {
  int stage = 0;
  double params = 0, grads = 0, optimizer = 0, activations = 0;  // bytes
  double in_flight = 1;  // micro-batches whose activations are held at once
  int blocks = 0;        // transformer blocks on the stage (megatron report)
  double logits = 0;     // part of activations: the last stage's fp32 logits (megatron)
  double total() const { return params + grads + optimizer + activations; }
};

// Elements of tensor t's result at `values` (both memory reports count in
// them).
double elements(const graph::Graph& g, int t, const expr::Values& values);

// What one tensor adds to the memory of a place (a pipeline stage, or for
// the plan sweep a part of the model): elements of `tensor` x `factor`
// bytes, divided by the data-parallel degree when `over_dp` (ZeRO).
struct MemoryTerm {
  enum class Part { kParams, kGrads, kOptimizer, kActivations };
  Part part = Part::kParams;
  int place = 0;
  int tensor = 0;
  double factor = 0;
  bool over_dp = false;
};

// The place of a tensor: its stage for the report.
using PlaceOf = std::function<int(int tensor)>;

// The terms of memory_by_stage in the order it adds them: each weight's
// params, optimizer and grads at the weight's place, then each activation
// buffer the backward pass reads once per place reading it (before
// in_flight).
std::vector<MemoryTerm> memory_terms(const graph::Graph& g, const mesh::Mesh& mesh,
                                     const MemoryOptions& options, const PlaceOf& place);

// The field of `m` a term of `part` adds to.
double& part_bytes(StageMemory& m, MemoryTerm::Part part);

// `elements` at `factor` bytes each: a number, or an expression (the
// factor must then be whole; throws expr::SizeError).
inline double scaled_bytes(double elements, double factor) { return factor * elements; }
expr::Expr scaled_bytes(const expr::Expr& elements, double factor);

// A term's bytes from its tensor's `elements` and the data-parallel degree
// `dp`: numbers at a run's values (the memory reports), or expressions of
// the free symbols (stg plans, sweep/plan_template.h).
template <typename Value>
Value term_bytes(const MemoryTerm& t, const Value& elements,
                 const std::type_identity_t<Value>& dp) {
  const Value bytes = scaled_bytes(elements, t.factor);
  return t.over_dp ? bytes / dp : bytes;
}

// `g` after the pass pipeline (stages assigned; comm ops are looked
// through: a collective or RECV carries its producer's buffer).
std::vector<StageMemory> memory_by_stage(const graph::Graph& g, const mesh::Mesh& mesh,
                                         const expr::Values& values, const MemoryOptions& options);

// "memory stage 0 (ranks 0-3): total 1.234 GiB = params ... " one line each.
std::string format_memory(const std::vector<StageMemory>& stages, int64_t ranks_per_stage);

}  // namespace stg::report
