// A forward-only workload: the model's forward work in named phases (a
// serving iteration: prefill, then decode steps), no gradients, no
// optimizer, no weight update. The graph's tensors carry their phase
// (graph::Phase, Tensor::phase_step); persistent state such as a KV cache is
// a tensor of Role::kPersistent that several phases read. Each stage runs
// the phases in the given order, each for every micro-batch (a group of
// requests).
#pragma once

#include <string>
#include <vector>

#include "stg/lower/schedule.h"
#include "stg/workloads/workload_kind.h"

namespace stg::workloads {

class ForwardOnly : public WorkloadKind {
 public:
  // `phases`: (phase, phase_step) in run order, e.g. prefill, decode 0, ...
  explicit ForwardOnly(std::vector<lower::Step> phases, int decode_steps = 1,
                       std::string context_symbol = "")
      : phases_(std::move(phases)),
        decode_steps_(decode_steps),
        context_symbol_(std::move(context_symbol)) {}
  std::string_view name() const override { return "forward-only"; }
  void add_graph_passes(passes::PassManager& pm, const Options& o, const models::Workload& w,
                        bool as_template) const override;
  lower::FlatSchedule schedule(const lower::LowerOptions& lo) const override;
  std::optional<Units> default_units() const override { return Units::kPhysical; }
  void adjust_lowering(lower::LowerOptions& lo) const override;
  std::string_view context_symbol() const override { return context_symbol_; }
  int decode_steps() const { return decode_steps_; }

 private:
  std::vector<lower::Step> phases_;
  int decode_steps_ = 1;
  std::string context_symbol_;
};

}  // namespace stg::workloads
