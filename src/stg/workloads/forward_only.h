// A forward-only workload: the model's forward work in named phases (a
// serving iteration: prefill, then decode steps), no gradients, no
// optimizer, no weight update. The graph's tensors carry their phase
// (graph::Phase, Tensor::phase_step); persistent state such as a KV cache is
// a tensor of Role::kPersistent that several phases read. Each stage runs
// the phases in the given order, each for every micro-batch (a group of
// requests).
#pragma once

#include <vector>

#include "stg/lower/schedule.h"
#include "stg/workloads/workload_kind.h"

namespace stg::workloads {

class ForwardOnly : public WorkloadKind {
 public:
  // `phases`: (phase, phase_step) in run order, e.g. prefill, decode 0, ...
  explicit ForwardOnly(std::vector<lower::Step> phases) : phases_(std::move(phases)) {}
  std::string_view name() const override { return "forward-only"; }
  void add_graph_passes(passes::PassManager& pm, const Options& o, const models::Workload& w,
                        bool as_template) const override;
  lower::FlatSchedule schedule(const lower::LowerOptions& lo) const override;

 private:
  std::vector<lower::Step> phases_;
};

}  // namespace stg::workloads
