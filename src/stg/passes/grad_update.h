// Gradient update: every weight w gets `w@1 = w@0 + dw`. Reading dw in the
// weight's own sharding is what makes the dp gradient all-reduce (or, with
// FSDP, the reduce-scatter) appear in lowering.
#pragma once

#include <string>

#include "stg/passes/pass.h"

namespace stg::passes {

// ZeRO stages 1 and 2 (stage 3 is FSDP, a sharding of the weights
// themselves): each data-parallel rank updates only its 1/dp share of every
// weight (dim 0 split over dp), then the updated shares are all-gathered.
// With stage 1 the gradient is first all-reduced in full (then sliced); with
// stage 2 it arrives sharded (reduce-scatter).
struct UpdateOptions {
  int zero_stage = 0;
  // The data-parallel degree's symbol: ZeRO 1/2 split dim 0 of each update
  // by it (unless the weight already is).
  std::string data_symbol;
  // With it, ZeRO 1/2 split dim 0 by data x context degree (Megatron-LM's
  // distributed optimizer shards over dp x cp).
  std::string context_symbol;
  // Megatron-LM's distributed optimizer: stage 1 too receives its gradient
  // share by a reduce-scatter (no full all-reduce first).
  bool distributed_optimizer = false;
};

// `gradient_of`: per tensor, its gradient's index or -1 (Analyses).
void add_weight_updates(graph::Graph& g, const std::vector<int>& gradient_of,
                        const UpdateOptions& options);

class AddWeightUpdates : public Pass {
 public:
  explicit AddWeightUpdates(int zero_stage, bool distributed_optimizer = false,
                            bool shard_over_context = false)
      : zero_stage_(zero_stage),
        distributed_optimizer_(distributed_optimizer),
        shard_over_context_(shard_over_context) {}
  std::string_view name() const override { return "add-weight-updates"; }
  void run(graph::Graph& g, Analyses& a) override;

 private:
  int zero_stage_;
  bool distributed_optimizer_;
  bool shard_over_context_;
};

}  // namespace stg::passes
