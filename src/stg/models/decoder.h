// A decoder: the input embedding, a list of blocks (each built by its block
// kind from parts, models/blocks/block_kinds.h; blocks need not be alike)
// and the output embedding with the loss, then the multi-token prediction
// modules, if any (blocks/mtp_module.h), placed as blocks numbered after the
// last (Model::num_blocks + depth - 1: pipeline placement puts them with the
// last part, recomputation and the memory report treat them as blocks). The families make its spec
// from the flags (models/families/); the axes are the later reference's, with `ep` when a block has
// experts.
#pragma once

#include <string>

#include "stg/models/blocks/block_spec.h"
#include "stg/models/model.h"
#include "stg/models/parts/context_parallel.h"
#include "stg/models/parts/kv_cache.h"
#include "stg/models/parts/part_choices.h"

namespace stg::models {

struct DecoderConfig {
  DecoderSpec spec;
  bool tpsp = true;          // Megatron's tensor + sequence parallel layouts
  int experts_per_rank = 4;  // MoE blocks: Experts / ep
  // Megatron-LM's vocabulary layers, tied or not, attention marks and MoE
  // layer with ep carved out of dp, as the framework chooses.
  PartChoices choices;
  ContextParallel cp;  // how attention crosses the cp axis
  // The first and the last part on different stages (pp > 1 and not
  // DualPipeV's V): the multi-token prediction modules keep a copy of the
  // input embedding (models/parts/mtp_vocabulary.h).
  bool ends_apart = false;
};

Model build_decoder(const DecoderConfig& config);

// The parts of build_decoder, for decoders built otherwise (a serving
// iteration, models/inference_decoder.h): the blocks, each named
// decoder_block_prefix(i) and linked to the one before, built for the
// serving phase `kv` says (none: training); the model's axes and the
// symbols its MoE blocks rename.
void append_decoder_blocks(graph::Graph& g, const DecoderConfig& config, const KvCache& kv = {});
std::string decoder_block_prefix(int i);
void set_decoder_axes(Model& m, const DecoderConfig& config);

// `n` blocks of one spec (a family whose blocks are all alike).
DecoderSpec uniform_decoder(int n, const BlockSpec& block);

}  // namespace stg::models
