// Micro-batching as the later reference does it: the forward+backward graph
// is replicated once per micro-batch ("mb<i>." prefix, Batch -> MicroBatch),
// the weights are shared, and each weight's per-micro-batch gradients are
// accumulated into one gradient (an op of one operation per element that
// waits for all of them), which the weight update then reads.
#pragma once

#include <map>
#include <string>

#include "stg/passes/pass.h"

namespace stg::passes {

// Takes the graph by value: the last replica reuses its tensors. `renames`
// turn the batch symbol into the micro-batch's (the model names both);
// `gradient_of` is the Analyses map of `g`. `as_template`: one micro-batch
// standing for many (lower/flat_stage.h): count must be 1, and each
// replica's name records where its micro-batch number is
// (Tensor::number_at), so that the copies can be named from it.
graph::Graph replicate_micro_batches(graph::Graph g, int count,
                                     const std::map<std::string, expr::Expr>& renames,
                                     const std::vector<int>& gradient_of, bool as_template = false);

class ReplicateMicroBatches : public Pass {
 public:
  ReplicateMicroBatches(int count, std::map<std::string, expr::Expr> renames)
      : count_(count), renames_(std::move(renames)) {}
  // One micro-batch standing for `count` (lower/flat_stage.h): the gradients
  // are accumulated as for `count`, names are micro-batch 0's.
  static ReplicateMicroBatches template_of(std::map<std::string, expr::Expr> renames) {
    ReplicateMicroBatches pass(1, std::move(renames));
    pass.as_template_ = true;
    return pass;
  }
  std::string_view name() const override { return "replicate-micro-batches"; }
  void run(graph::Graph& g, Analyses& a) override {
    // The analysis lives in `a`, not in `g`: it stays valid while g moves.
    const std::vector<int>& gradient_of = a.gradient_of(g);
    g = replicate_micro_batches(std::move(g), count_, renames_, gradient_of, as_template_);
  }

 private:
  int count_;
  std::map<std::string, expr::Expr> renames_;
  bool as_template_ = false;
};

}  // namespace stg::passes
