// What one trace models (DESIGN: workloads beyond a training step): which
// phases the graph's work belongs to, the passes that turn a model's graph
// into that workload, and the order a stage runs its steps in. The
// training step (training_step.h) is one workload; a forward-only one
// (forward_only.h: serving's prefill and decode steps) is another, with
// its own passes, not the training graph with passes removed. A new
// workload is a new file implementing this interface (docs/architecture.md
// "How to add a workload phase").
#pragma once

#include <optional>
#include <string_view>

#include "stg/lower/flat_stage.h"
#include "stg/lower/lower_stage.h"
#include "stg/options.h"
#include "stg/passes/pass.h"

namespace stg::models {
struct Workload;
}

namespace stg::workloads {

class WorkloadKind {
 public:
  virtual ~WorkloadKind() = default;
  virtual std::string_view name() const = 0;
  // The passes after bind-symbols and before assign-stages: micro-batching
  // (`as_template`: one micro-batch standing for all, lower/flat_stage.h)
  // and what the workload adds to the model's graph.
  virtual void add_graph_passes(passes::PassManager& pm, const Options& o,
                                const models::Workload& w, bool as_template) const = 0;
  // The passes after insert-send-recv and before insert-collectives.
  virtual void add_link_passes(passes::PassManager& /*pm*/, const models::Workload& /*w*/) const {}
  // The order of each stage's steps.
  virtual lower::FlatSchedule schedule(const lower::LowerOptions& lo) const = 0;
  // The workload's own lowering choices, over the framework's: the units
  // when the flags leave them unset (empty: the framework's), what
  // tensor_size counts, the node order.
  virtual std::optional<Units> default_units() const { return std::nullopt; }
  virtual void adjust_lowering(lower::LowerOptions& /*lo*/) const {}
  // A decode-step template (lower/step_growth.h): the symbol of the context
  // length, one token longer in each decode step; empty: none.
  virtual std::string_view context_symbol() const { return {}; }
};

// Micro-batching, shared by the workloads: the model's graph for one
// micro-batch (`as_template`) or `replicas` of them (lower::replica_count);
// nothing when the model is not micro-batched.
void add_micro_batches(passes::PassManager& pm, const models::Workload& w, bool as_template,
                       int replicas);

}  // namespace stg::workloads
