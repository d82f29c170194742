// The block kinds: each builds a block of the decoder from parts
// (models/parts/) as its BlockSpec says. A new block kind is a value of
// BlockKind (blocks/block_spec.h), a file with its builder and a row of
// the table in block_kinds.cc (docs/architecture.md "How to add a block kind").
#pragma once

#include "stg/graph/graph.h"
#include "stg/models/blocks/block_spec.h"
#include "stg/models/parts/context_parallel.h"
#include "stg/models/parts/kv_cache.h"
#include "stg/models/parts/part_choices.h"
#include "stg/report/activation_memory.h"

namespace stg::models {

// What every block is built with besides its spec.
struct BlockContext {
  bool tpsp = true;          // Megatron's tensor + sequence parallel layouts
  int experts_per_rank = 0;  // MoE blocks: Experts / ep
  PartChoices choices;
  ContextParallel cp;  // how attention crosses the cp axis
  KvCache kv;          // serving: the phase the block is built for, its KV cache
};

using BlockBuilder = graph::Graph (*)(const BlockSpec& spec, const BlockContext& context);

struct BlockKindInfo {
  BlockKind kind;
  const char* name;
  BlockBuilder build;
};

// The builders, one file each.
graph::Graph mixer_mlp_block(const BlockSpec& spec, const BlockContext& context);
graph::Graph mtp_module(const BlockSpec& spec, const BlockContext& context);  // mtp_module.h

const BlockKindInfo& block_kind(BlockKind kind);

// The block's activation terms for the Megatron-LM memory report (its
// frame's, with GPT-3's `dropout` masks, its mixer row's and its MLP's;
// block_activations.cc).
report::BlockActivations block_activations(const BlockSpec& spec, bool dropout);

}  // namespace stg::models
