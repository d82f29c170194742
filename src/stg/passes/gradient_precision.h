// Gradients in their own element type (--framework megatron, --grad_dtype):
// Megatron-LM accumulates and reduces the gradients of bf16 training in fp32.
// Marks every weight gradient (Role::kGradient) with the element size; the
// collectives that carry one are sized with it (lower::LowerOptions).
#pragma once

#include "stg/passes/pass.h"

namespace stg::passes {

class SetGradientPrecision : public Pass {
 public:
  explicit SetGradientPrecision(int element_bytes) : element_bytes_(element_bytes) {}
  std::string_view name() const override { return "set-gradient-precision"; }
  void run(graph::Graph& g, Analyses&) override {
    for (size_t i = 0; i < g.size(); ++i)
      if (g[i].role == graph::Role::kGradient)
        g.mutable_tensor_keep_result(static_cast<int>(i)).element_bytes = element_bytes_;
  }

 private:
  int element_bytes_;
};

}  // namespace stg::passes
