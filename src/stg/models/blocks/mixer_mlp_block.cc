// A block: its mixer row's module, then its MLP row's, in the frame
// (blocks/frame.h).
#include "stg/models/blocks/block_kinds.h"
#include "stg/models/blocks/frame.h"
#include "stg/models/mixers/mixer_row.h"
#include "stg/models/mlps/mlp_row.h"

namespace stg::models {

graph::Graph mixer_mlp_block(const BlockSpec& spec, const BlockContext& c) {
  PartChoices choices = c.choices;
  // Megatron-LM: the experts' weights get a gradient bucket of their own.
  const bool experts = spec.mlp && spec.mlp->experts;
  if (experts && choices.experts_carved_from_dp) choices.expert_data_symbol = "edp";
  // The experts' layouts need sequence-sharded activations (--tpsp 1).
  const Layout l(c.tpsp || experts);
  const graph::Graph mixer = spec.mixer->build(l, spec, choices, c.cp, c.kv);
  FfnPorts ports;
  if (!spec.mlp) return frame_block(l, spec, mixer, nullptr, ports, choices);
  const graph::Graph mlp = spec.mlp->build(l, spec.mlp_options, choices, c.experts_per_rank, ports);
  return frame_block(l, spec, mixer, &mlp, ports, choices);
}

}  // namespace stg::models
