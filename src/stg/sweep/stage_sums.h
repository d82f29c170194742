// One plan's figures by pipeline stage, added up from the template's parts
// (plan_template.h) at the plan's values: each stage's FLOPs, memory and
// traffic by axis in one flat row of fields, so that the sweep's innermost
// loop adds a part's non-zero figures and nothing else.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "stg/sweep/plan_template.h"
#include "stg/sweep/plan_time.h"

namespace stg::sweep {

// A stage's row: its own fields, then kAxisFields per axis (by index).
enum StageField { kFlops, kParams, kGrads, kOptimizer, kKept, kStageFields };
enum AxisField {
  kSent,                                     // bytes sent (the plans' columns)
  kKindBytes,                                // + collective kind: bytes
  kKindOps = kKindBytes + kCollectiveKinds,  // + collective kind: collectives
  kSentBytes = kKindOps + kCollectiveKinds,  // point to point, for the step time
  kSends,
  kAxisFields
};
constexpr int axis_field(int axis, int field) { return kStageFields + axis * kAxisFields + field; }

// An expression's value at a plan's values (0 for none).
inline double value(const FastExpr& e, const std::vector<int64_t>& v) {
  return e.empty() ? 0 : e.value(v);
}

// Fields and what to add to them. A zero is left out: adding it changes no
// sum, so the sums are those of adding every field.
class Fields {
 public:
  void put(int field, double value) {
    if (value != 0) entries_.push_back({field, value});
  }
  const std::vector<std::pair<int, double>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<int, double>> entries_;
};

// What a rank moves in a step in `f` (per micro-batch and once) as the
// fields of axis `axis`: its bytes, and for the step time its collectives
// by kind or, without any, its sends.
void put_flow(Fields& out, int axis, const Flow& f, const std::vector<int64_t>& values,
              int micro_batches);

// A part's figures at one plan's values: its fields (kKept: the
// activations only it reads), and the activations the next part reads too.
struct PartValues {
  Fields fields;
  double kept_next_and_both = 0, kept_both = 0;
};

class StageSums {
 public:
  StageSums(int stages, int axes) : stages_(stages), width_(axis_field(axes, 0)) {}

  // Each real part u (0 the first, 1 + b block b, the last) at its stage:
  // blocks in contiguous runs of stages x chunks virtual stages
  // (passes/pipeline.h), the ends with the first and last block or, with
  // more stages than blocks, on stages of their own; `template_part[u]` is
  // the template's part with its figures. A stage boundary's sends count
  // on both sides (`forward` on the sender of the activations, `backward`
  // on the sender of their gradients).
  void add_up(const std::vector<PartValues>& parts, const std::vector<int>& template_part,
              int chunks, const Fields& forward, const Fields& backward);

  int stages() const { return stages_; }
  double* stage(int s) { return fields_.data() + static_cast<size_t>(s) * width_; }
  const double* stage(int s) const { return fields_.data() + static_cast<size_t>(s) * width_; }
  // The stage of each real part, as add_up placed them.
  const std::vector<int>& stage_of() const { return stage_of_; }

 private:
  int stages_;
  int width_;
  std::vector<double> fields_;
  std::vector<int> stage_of_;
};

}  // namespace stg::sweep
