// One lowering-free template per shape of plan (docs/python.md, "stg
// plans"): the model built with a few blocks, a plan's tp, cp and ep, and
// whether dp and pp are above 1, through the pass pipeline; what each part
// of the model (the first part, each block, the last part) does and holds
// kept as expressions of the other degrees and the micro-batch, so that
// every plan of that shape is evaluated without building its graph.
//
// The figures come from the rules that lowering and the reports use on a
// run's graph, called here on expressions instead of values: an op's FLOPs
// and the bytes it moves from lower/op_cost.h, the axis a transfer is
// reported under from report/stage_figures.h, memory from the framework's
// memory terms and report/memory.h's term_bytes. What the template adds is
// only the bookkeeping: which part of the model an op belongs to, and
// whether it repeats per micro-batch. tests/plans_test.cc checks the sums
// against stg::plan().
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "stg/mesh/axes.h"
#include "stg/mesh/mesh.h"
#include "stg/options.h"
#include "stg/report/activation_memory.h"
#include "stg/sweep/fast_expr.h"

namespace stg::sweep {

// Whether the template keeps an axis's degree a symbol: the data axis and
// the stages (their degrees only move sizes and counts), not the others.
constexpr bool free_degree(const mesh::AxisSpec& a) {
  return a.kind == mesh::AxisKind::kData || a.kind == mesh::AxisKind::kStage;
}

// What makes two plans' graphs differ beyond their symbols' values: the
// degree of each axis by row (mesh/axes.h), for a free_degree axis only
// whether it is above one (1 or 2), and the ZeRO stage.
struct TemplateKey {
  std::array<int64_t, mesh::kNumAxes> degree = [] {
    std::array<int64_t, mesh::kNumAxes> ones{};
    ones.fill(1);
    return ones;
  }();
  int zero_stage = 0;
  auto operator<=>(const TemplateKey&) const = default;
};

// The key of a plan's degrees.
TemplateKey template_key(const mesh::Degrees& degree, int zero_stage);

// Operations and bytes of one direction of traffic, per micro-batch and once
// per step.
struct Flow {
  int64_t ops_per_micro_batch = 0, ops_once = 0;
  FastExpr bytes_per_micro_batch, bytes_once;
  // The collectives among them by kind (graph::CollType's order), for the
  // step time (plan_time.h); all zero for sends.
  std::array<int64_t, 4> kind_ops_per_micro_batch{}, kind_ops_once{};
  std::array<FastExpr, 4> kind_bytes_per_micro_batch, kind_bytes_once;
};

// A part of the model: the first part (embedding), a block, the last part.
struct PartFigures {
  FastExpr flops_per_micro_batch, flops_once;
  // By axis name (report/step_figures.h): [0] sent or collective, [1] received.
  std::map<std::string, std::array<Flow, 2>> axes;
  FastExpr params, grads, optimizer;  // bytes on the rank holding the part
  // Activation bytes of one micro-batch the backward pass keeps, by the
  // parts that read them: this part only, the next part only, both.
  FastExpr kept_here, kept_next, kept_both;
};

class PlanTemplate {
 public:
  // Builds the template of `key` for `blocks` template blocks; throws
  // UsageError when the model refuses the key's degrees.
  PlanTemplate(const Options& base, const TemplateKey& key, int blocks);

  // parts()[0] is the first part, [1 + b] block b, [blocks + 1] the last.
  const std::vector<PartFigures>& parts() const { return parts_; }
  // A stage boundary: forward (activations) and backward (their gradients).
  const Flow& forward_link() const { return forward_link_; }
  const Flow& backward_link() const { return backward_link_; }
  // The plan's values (indices of the template's symbols).
  std::vector<int64_t> values(int64_t dp, int64_t pp, int64_t micro_batch, int64_t batch) const;
  // Every shape and operation count lowering would evaluate is whole.
  bool whole(const std::vector<int64_t>& values) const;
  // With a formula of activations (Megatron-LM's): its options, the
  // template's mesh and values to evaluate it with a plan's dp and pp.
  const std::optional<report::ActivationMemoryOptions>& activation_formula() const {
    return formula_;
  }
  mesh::Mesh mesh_of(int64_t dp, int64_t pp) const;
  // The model's mesh as the template built it (which axes the model has).
  const mesh::Mesh& model_mesh() const { return mesh_; }
  expr::Values named_values(int64_t dp, int64_t pp, int64_t micro_batch, int64_t batch) const;

 private:
  Symbols symbols_;
  std::vector<int64_t> base_values_;
  int dp_ = -1, pp_ = -1, micro_batch_ = -1, batch_ = -1;  // symbol indices
  std::vector<PartFigures> parts_;
  Flow forward_link_, backward_link_;
  // A size or count to check whole: fast, and exact when 128 bits overflow.
  struct Check {
    FastExpr fast;
    expr::Expr exact;
  };
  std::vector<Check> checks_;
  std::optional<report::ActivationMemoryOptions> formula_;
  mesh::Mesh mesh_;
  expr::Values named_;
  std::string dp_symbol_;
};

}  // namespace stg::sweep
