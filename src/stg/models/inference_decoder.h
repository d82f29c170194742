// A decoder's serving iteration (docs/inference.md): the prefill of the
// requests' prompts (Seq tokens each), then decode steps of one token per
// request, as phases of one forward-only graph (workloads/forward_only.h).
// Each phase is the decoder's forward pass (models/forward_graph.h) built
// for that phase: the blocks' attention with its KV cache
// (models/parts/kv_cache.h) and, after the last block, the logits of each
// request's last token only and the token sampled from them. The phases
// share the weights and the KV caches (named without the phase); each decode
// step embeds the token sampled before it.
#pragma once

#include <cstdint>

#include "stg/models/decoder.h"

namespace stg::models {

struct ServingPlan {
  // Without the prefill, a stand-in for it: the prompts' last tokens, which
  // the first decode step embeds, on the stage that samples tokens.
  bool prefill = true;
  int decode_steps = 0;  // 0: the prefill only
  // The graph holds decode step 0 standing for every step (names numbered
  // at Tensor::step_at, the context length the symbol Ctx, its token
  // succeeding the prefill's: lower/flat_stage.h); else every step, each
  // with its own context length, first_context for step 0.
  bool steps_from_one = true;
  int64_t first_context = 0;
  int kv_element_bytes = 0;  // of the KV cache; 0: the trace's --dtype
  // Prefill and decode on pools of ranks of their own (graph::Placement::
  // pool): `prefill_pools` pools for the prefill (0, 1, ...), then
  // `decode_pools` for the decode steps, each the plan's stages with its
  // weights and caches. The ranks in one place of every pool serve the same
  // requests, each prefill pool an equal share of them in order, each
  // decode pool one too; each block's cache and the first tokens of the
  // requests two pools share go from the prefill pool to the decode pool.
  bool disaggregated = false;
  int prefill_pools = 1, decode_pools = 1;
};

Model build_inference_decoder(const DecoderConfig& config, const ServingPlan& plan);

}  // namespace stg::models
