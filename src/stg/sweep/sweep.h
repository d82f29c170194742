// `stg plans`: every valid parallel plan of a model on N GPUs, each
// evaluated without building its graph or writing a trace (plan_template.h):
// memory per rank, FLOPs per rank, bytes per parallel axis per rank and the
// pipeline schedule's bubble. docs/python.md, "stg plans", says how.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "stg/mesh/axes.h"
#include "stg/options.h"
#include "stg/sweep/plan_time.h"
#include "stg/util/progress.h"

namespace stg::sweep {

// One plan: the flags that set it and its figures. Per rank figures are the
// largest over the ranks (the most loaded pipeline stage).
struct PlanRow {
  mesh::Degrees degree;  // by row of the axis table (mesh/axes.h), the stages' row too
  int virtual_stages = 1;
  int64_t micro_batch = 1;  // --micro_batch: sequences of a micro-batch over all dp ranks
  int zero_stage = 0;
  int micro_batches = 1;
  std::string schedule;  // 1f1b, or interleaved with virtual stages
  // Memory of the rank that holds the most (bytes): its parts and total.
  double params = 0, grads = 0, optimizer = 0, activations = 0, memory = 0;
  double flops = 0;                     // per rank per step
  std::map<std::string, double> bytes;  // per axis, sent per rank per step
  double bubble = 0;                    // idle fraction of the schedule's makespan
  StepTime time;                        // predicted (plan_time.h)
};

struct SweepOptions {
  int64_t gpus = 1;
  // Degrees and choices the user fixed (a flag given): only plans with them.
  // Degrees by the axis's label (AxisSpec::label: "dp", "cp", "pp", ...),
  // and "virtual_stages", "micro_batch", "zero_stage".
  std::map<std::string, int64_t> fixed;
  int threads = 0;
  ProgressListener* progress = nullptr;  // told the shapes built and the plans evaluated
};

struct SweepResult {
  std::vector<PlanRow> plans;  // in enumeration order
  int64_t candidates = 0;      // degree, micro-batch and ZeRO choices tried
  int64_t templates = 0;       // distinct plan shapes built
};

// The idle fraction of the most idle stage of 1F1B (chunks 1) or the
// interleaved schedule, all passes of one length, as `stg inspect
// --schedule` measures it: (pp - 1) / (chunks x micro_batches + pp - 1).
double bubble_fraction(int pp, int micro_batches, int chunks);

// The step times are predicted on the GPU of `base` (--gpu; sweep/machine.h).
// Throws UsageError for a model that is not a decoder or bad options.
SweepResult sweep(const Options& base, const SweepOptions& options);

}  // namespace stg::sweep
