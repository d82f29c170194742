// The figures of a serving iteration (stg infer, docs/inference.md) per rank
// of each pipeline stage, for checking a serving trace against one's own
// arithmetic. Per phase (the prefill; the first and the last decode step;
// all decode steps): its FLOPs, the bytes its compute nodes move (their
// tensor_size, which a roofline divides by memory bandwidth), read and, of
// those, the weights and the KV cache they read, the bytes its
// communication carries, and its roofline time: FLOPs / peak against bytes
// moved / bandwidth
// (the figures of `stg validate`, hardware/roofline.h). The memory of a rank:
// its weights, its KV caches at their full length, and activations: the
// largest working set of one op (its activation inputs and its output, for
// one micro-batch; the prefill's, when there is one, are the largest);
// against the HBM a GPU has.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stg/expr/values.h"
#include "stg/graph/graph.h"
#include "stg/hardware/roofline.h"
#include "stg/lower/flat_stage.h"

namespace stg::report {

struct PhaseFigures {
  std::string phase;  // "prefill", "decode 0", ..., "decode, 128 steps"
  int64_t flops = 0;
  int64_t bytes = 0;         // moved by compute nodes (tensor_size: read and written)
  int64_t bytes_read = 0;    // of them, read
  int64_t weight_bytes = 0;  // of those, read from weights
  int64_t kv_bytes = 0;      // and read from KV caches
  int64_t comm_bytes = 0;    // collectives and sends
  bool operator==(const PhaseFigures&) const = default;
};

struct ServingMemory {
  int64_t weights = 0, kv_cache = 0, activations = 0;  // bytes
  int64_t total() const { return weights + kv_cache + activations; }
};

struct StageServing {
  int stage = 0;
  int64_t first_rank = 0, last_rank = 0;
  std::string pool;  // with --disaggregate: "prefill pool" or "decode pool"
  std::vector<PhaseFigures> phases;
  ServingMemory memory;
};

struct ServingFigures {
  bool prefill = true;
  int64_t requests = 0, prompt_len = 0, decode_steps = 0;
  std::string kv_dtype;  // "bf16", "fp8", ...
  hardware::RooflineFigures roofline;
  double hbm_gb = 0;
  std::vector<StageServing> stages;  // the stages written
  // The stage of the most memory per rank and its figures (of every stage).
  int largest_stage = 0;
  std::string largest_pool;  // its pool's name with --disaggregate, else ""
  ServingMemory largest;
  bool fits() const { return static_cast<double>(largest.total()) <= hbm_gb * 1e9; }
};

// The phases of one rank of `stage` (phase figures sum over its
// micro-batches: a rank runs them all); the prefill's unless there is none
// (`prefill` false: the decode steps start from filled caches).
std::vector<PhaseFigures> phase_figures(const lower::FlatStage& stage, bool prefill = true);

// The memory of a rank of `stage`: `g` the graph after the pass pipeline
// (one micro-batch standing for `micro_batches`), elements of
// `element_bytes` unless a tensor has its own.
ServingMemory stage_memory(const graph::Graph& g, int stage, const expr::Values& values,
                           int64_t element_bytes, int micro_batches);

// Compute and memory time of a phase under the roofline (seconds).
double compute_seconds(const PhaseFigures& p, const hardware::RooflineFigures& hw);
double memory_seconds(const PhaseFigures& p, const hardware::RooflineFigures& hw);

// The figures as text lines, each ending in '\n'.
std::string format_serving(const ServingFigures& f);

// "stg infer: stage 0 needs 93.4 GB per rank (...), more than --hbm_gb 80"
// with what to change; "" when every stage fits.
std::string hbm_refusal(const ServingFigures& f);

}  // namespace stg::report
