// The ends of the multi-token prediction modules (blocks/mtp_module.h):
// each depth looks its shifted tokens up in the model's input embedding and
// predicts through the model's output layer and loss, with the main ends'
// parts (the reference's, or Megatron-LM's). The weights are not
// duplicated: where a depth's lookup or output layer is on the stage of the
// weight it uses, it reads that weight and the weight's gradient becomes
// the sum of every use. The input embedding lives on the first stage and
// the modules on the last: when those differ (`ends_apart`: pp > 1, not
// DualPipeV) the last stage holds a copy of the input embedding (the
// output layer's copy when the embeddings are tied), both copies marked
// Tensor::tied, whose gradients the tie-embeddings pass sums once per step
// (as DeepSeek-V3 and Megatron-LM keep the embedding on the MTP's stage).
#pragma once

#include <string>

#include "stg/graph/graph.h"
#include "stg/models/parts/part_choices.h"

namespace stg::models {

// Appends depth `prefix`'s lookup (`prefix`emb.) and output layer
// (`prefix`head., the reference's loss `prefix`loss.) at the last part's
// placement, linked to the module's ports under `prefix`, and shares their
// weights as above. `depth`: 0 for the first module (which holds the last
// stage's copy of the input embedding when the ends are apart, read by
// `first_prefix`'s for deeper ones).
void append_mtp_vocabulary(graph::Graph& g, const std::string& prefix,
                           const std::string& first_prefix, int depth, bool tpsp,
                           const PartChoices& choices, bool ends_apart);

}  // namespace stg::models
