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

// The character that stands for the micro-batch number in the names of a
// micro-batch template (see ReplicateMicroBatches::template_of): the flat
// writer (emit/flat_writer.h) writes the number in its place.
inline constexpr char kMicroBatchHole = '\x1f';

// Takes the graph by value: the last replica reuses its tensors. `renames`
// turn the batch symbol into the micro-batch's (the model names both);
// `gradient_of` is the Analyses map of `g`. `number` is what the prefix
// "mb<number>." writes for micro-batch mb: its decimal digits when empty,
// else the given text (the template's hole; count must then be 1).
graph::Graph replicate_micro_batches(graph::Graph g, int count,
                                     const std::map<std::string, expr::Expr>& renames,
                                     const std::vector<int>& gradient_of,
                                     const std::string& number = "");

class ReplicateMicroBatches : public Pass {
 public:
  ReplicateMicroBatches(int count, std::map<std::string, expr::Expr> renames)
      : count_(count), renames_(std::move(renames)) {}
  // One micro-batch standing for `count` (lower/flat_stage.h): the gradients
  // are accumulated as for `count`, names carry kMicroBatchHole.
  static ReplicateMicroBatches template_of(std::map<std::string, expr::Expr> renames) {
    ReplicateMicroBatches pass(1, std::move(renames));
    pass.number_ = std::string(1, kMicroBatchHole);
    return pass;
  }
  std::string_view name() const override { return "replicate-micro-batches"; }
  void run(graph::Graph& g, Analyses& a) override {
    // The analysis lives in `a`, not in `g`: it stays valid while g moves.
    const std::vector<int>& gradient_of = a.gradient_of(g);
    g = replicate_micro_batches(std::move(g), count_, renames_, gradient_of, number_);
  }

 private:
  int count_;
  std::map<std::string, expr::Expr> renames_;
  std::string number_;
};

}  // namespace stg::passes
