// The dense block: attention and a dense MLP (two matrices or gated).
#include "stg/models/blocks/block_kinds.h"
#include "stg/models/blocks/frame.h"
#include "stg/models/mixers/mixer_row.h"
#include "stg/models/parts/mlp.h"

namespace stg::models {

graph::Graph dense_block(const BlockSpec& spec, const BlockContext& c) {
  const Layout l(c.tpsp);
  return frame_block(l, spec.mixer->build(l, spec, c.choices, c.cp, c.kv), mlp(l, spec.mlp),
                     {"ffn.", "ffn.x0", "ffn.xdown", "ffn.dxdown", "ffn.dx0"}, c.choices);
}

}  // namespace stg::models
