// An MLP kind as one row (docs/architecture.md "How to add an MLP kind"):
// its flags (row_flag.h), the dimension symbols it binds, its checks, its
// graph builder with the ports the block frame plugs it in by, and its
// activations for the Megatron-LM memory report. A block is a mixer row and an MLP row
// (models/blocks/block_spec.h); a new MLP kind is one file that defines its
// row, and one line in mlp_rows.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "stg/graph/graph.h"
#include "stg/mesh/axes.h"
#include "stg/models/blocks/block_spec.h"
#include "stg/models/blocks/frame.h"
#include "stg/models/flag_binding.h"
#include "stg/models/parts/layout.h"
#include "stg/models/parts/part_choices.h"
#include "stg/models/row_flag.h"
#include "stg/options.h"
#include "stg/report/activation_memory.h"

namespace stg::models {

struct MlpRow {
  const char* name;
  // The row's flags (row_flag.h).
  std::vector<RowFlag> flags = {};
  // Routes tokens to experts over the ep axis: the decoder gets the ep axis
  // (Megatron-LM carves it out of dp), the block the sequence-sharded layout
  // and the experts' gradient bucket.
  bool experts = false;
  // The block's MLP with `options`, and the ports the frame links it by.
  graph::Graph (*build)(const Layout& l, const std::vector<int64_t>& options,
                        const PartChoices& choices, int experts_per_rank, FfnPorts& ports);
  // A block's `options` as the row's flags set them (the MoE families lay
  // out their blocks with it, families/expert_layout.h); may be null.
  std::vector<int64_t> (*flagged_options)(const std::vector<int64_t>& options,
                                          const Options& o) = nullptr;
  // The dimension symbols the blocks with `options` need, with their flags
  // and defaults; may be null.
  void (*dims)(const std::vector<int64_t>& options, const std::map<std::string, int64_t>& values,
               const Options& o, std::vector<Dim>& dims) = nullptr;
  // Refuses what the row cannot build (each distinct options of the blocks
  // that have it); may be null.
  void (*check)(const std::vector<int64_t>& options, const std::map<std::string, int64_t>& values,
                const Options& o, const mesh::Degrees& degree) = nullptr;
  // What the block's MLP keeps for the backward pass.
  report::ActivationTermOf activations = nullptr;
};

// The rows (mlp_rows.cc): a dense MLP (options: gated) and routed experts
// (options: ExpertOptions, models/parts/moe.h).
const MlpRow& dense_mlp_row();
const MlpRow& experts_row();
const std::vector<const MlpRow*>& mlp_rows();

// The rows' dims() of the blocks that have them, in the table's order.
std::vector<Dim> mlp_dims(const DecoderSpec& d, const std::map<std::string, int64_t>& values,
                          const Options& o);
// Each placed row's check(), per distinct options.
void check_mlps(const DecoderSpec& d, const std::map<std::string, int64_t>& values,
                const Options& o, const mesh::Degrees& degree);

}  // namespace stg::models
