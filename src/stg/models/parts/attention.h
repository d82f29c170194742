// The attention parts of a block: a fused QKV projection, the attention
// kernel (one op forward, one per gradient backward) and the output
// projection. Multi-head attention, or grouped-query attention with KVHead
// key/value heads (AttentionKind). A new attention kind (e.g. multi-head
// latent attention) is a new value of AttentionKind and its builder here.
#pragma once

#include "stg/graph/graph.h"
#include "stg/models/blocks/block_spec.h"
#include "stg/models/parts/context_parallel.h"
#include "stg/models/parts/layout.h"
#include "stg/models/parts/megatron_parts.h"

namespace stg::models {

// Tensors: input x and output o in the activation layout, their gradients
// do and dx; weights wqkv and wo. The kernel crosses the context-parallel
// axis as `cp` says (context_parallel.h).
graph::Graph attention(const Layout& l, AttentionKind kind, const MegatronParts& megatron = {},
                       const ContextParallel& cp = {});

}  // namespace stg::models
