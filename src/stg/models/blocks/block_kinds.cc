#include "stg/models/blocks/block_kinds.h"

#include <stdexcept>

namespace stg::models {

const BlockKindInfo& block_kind(BlockKind kind) {
  static const BlockKindInfo kinds[] = {
      {BlockKind::kBlock, "block", mixer_mlp_block},
      {BlockKind::kMtp, "mtp", mtp_module},
  };
  for (const BlockKindInfo& k : kinds)
    if (k.kind == kind) return k;
  throw std::logic_error("a block kind without a builder");
}

}  // namespace stg::models
