// One training step: forward and backward passes of every micro-batch, the
// recomputation the flags ask for, and the framework's gradient reduction
// and weight update (frameworks/framework.h); tied embeddings sum their
// gradients over their copies. Steps: the pipeline schedule's forward and
// backward passes (lower/schedule.h).
#pragma once

#include "stg/workloads/workload_kind.h"

namespace stg::workloads {

class TrainingStep : public WorkloadKind {
 public:
  std::string_view name() const override { return "training-step"; }
  void add_graph_passes(passes::PassManager& pm, const Options& o, const models::Workload& w,
                        bool as_template) const override;
  void add_link_passes(passes::PassManager& pm, const models::Workload& w) const override;
  lower::FlatSchedule schedule(const lower::LowerOptions& lo) const override;
};

const TrainingStep& training_step();

}  // namespace stg::workloads
