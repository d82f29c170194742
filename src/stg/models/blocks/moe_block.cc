// The MoE block: attention, then a router and experts (models/parts/moe.h)
// in place of the dense MLP.
#include "stg/models/blocks/block_kinds.h"
#include "stg/models/blocks/frame.h"
#include "stg/models/mixers/mixer_row.h"
#include "stg/models/parts/moe.h"

namespace stg::models {

graph::Graph moe_block(const BlockSpec& spec, const BlockContext& c) {
  PartChoices choices = c.choices;
  // Megatron-LM: the experts' weights get a gradient bucket of their own.
  if (choices.experts_carved_from_dp) choices.expert_data_symbol = "edp";
  // The experts' layouts need sequence-sharded activations (--tpsp 1).
  const Layout l(true);
  const MoePorts ports = moe_ports(spec);
  return frame_block(l, spec.mixer->build(l, spec, choices, c.cp, c.kv),
                     moe_ffn(spec, c.experts_per_rank, choices.experts_carved_from_dp),
                     {"", "moe.x", ports.y, "moe.dy", ports.dx}, choices);
}

}  // namespace stg::models
