// The frame every block kind shares: input norm, the block's mixer,
// residual, then (when the block has an MLP) post-mixer norm, the MLP
// (dense, or router and experts), residual; its weights flattened for FSDP
// (models/flat_weights.h). The decoder links blocks by the frame's names
// (input_norm.x, ffn_res.y).
#pragma once

#include <string>

#include "stg/graph/graph.h"
#include "stg/models/blocks/block_spec.h"
#include "stg/models/parts/layout.h"
#include "stg/models/parts/part_choices.h"

namespace stg::models {

// Where a block plugs in its MLP module: the name prefix it is appended
// under, and its input, output, output-gradient and input-gradient tensors
// (full names).
struct FfnPorts {
  std::string prefix, x, y, dy, dx;
};

// Gradient `target` (a link, or an input placeholder) becomes the sum of
// `a` and `b`, seen in target's view: a tensor read by two branches.
void sum_gradients(graph::Graph& g, const std::string& target, const std::string& a,
                   const std::string& b);

// The name within a block of `spec`'s mixer tensor `name`: the frame
// appends the mixer under its row's slot (MixerRow::slot).
std::string mixer_tensor(const BlockSpec& spec, const std::string& name);

// The block `spec` around its built `mixer` and `ffn`. `ffn` null: a block of
// its mixer alone (a Mamba block of Nemotron-H), whose one residual is the
// block's output (ffn_res, as in every block).
graph::Graph frame_block(const Layout& l, const BlockSpec& spec, const graph::Graph& mixer,
                         const graph::Graph* ffn, const FfnPorts& ports,
                         const PartChoices& choices);

}  // namespace stg::models
