// The decoder's ends: the input embedding before the first block, the
// output embedding (or layer) and the loss after the last; the reference's
// layers, or Megatron-LM's (models/parts/vocab_parallel_embedding.h), tied or not.
#pragma once

#include <string>

#include "stg/graph/graph.h"
#include "stg/models/parts/layout.h"
#include "stg/models/parts/part_choices.h"

namespace stg::models {

// Appends the ends to `g` and links them to the first block's input norm
// and the last block's output residual (`first`, `last`: the blocks' name
// prefixes).
void append_vocabulary(graph::Graph& g, const std::string& first, const std::string& last,
                       bool tpsp, const PartChoices& choices);

// The reference's layers: a matrix product from Din to Dout features
// (tensors x, w, y, dy, dw, dx; renamed when appended), and the loss
// (tensors y, loss, dy).
graph::Graph reference_embedding(bool tpsp);
graph::Graph reference_loss(const Layout& l);

// The ends of a serving phase (models/inference_decoder.h), forward only:
// the input embedding of the phase's tokens; after the last block, the
// output embedding of each sequence's last token (`last_token`: the phase
// has more than one, a prefill; else its one token) and the token sampled
// from its logits, "token.y" (one per sequence; an argmax, one operation
// per logit of the rank).
void append_serving_vocabulary(graph::Graph& g, const std::string& first, const std::string& last,
                               bool tpsp, const PartChoices& choices, bool last_token);

}  // namespace stg::models
