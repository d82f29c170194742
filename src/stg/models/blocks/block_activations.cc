// A block's activation terms for the Megatron-LM memory report (Korthikanti
// et al. 2022, §4.1; docs/megatron.md "Memory per rank"): its frame's, its
// mixer row's and its MLP's, which report/activation_memory.h sums.
#include "stg/models/blocks/block_kinds.h"
#include "stg/models/mixers/mixer_row.h"
#include "stg/models/mlps/mlp_row.h"

namespace stg::models {

namespace {

using report::ActivationBytes;

double value(const expr::Values& values, const char* symbol) {
  return report::bound_value(values, symbol, 1);
}

// The frame (options: GPT-3's dropout, an MTP module around the block):
// the inputs of the two norms, the QKV and the MLP input (the norms'
// outputs), 2 bytes each; GPT-3's two dropout masks (1 byte each); an MTP
// module's two inputs and the joined pair (2h wide). Full recomputation
// keeps the block's input (an MTP module's two).
ActivationBytes frame_activations(const std::vector<int64_t>& options, const expr::Values& values,
                                  double s, double b) {
  const bool dropout = options.at(0) != 0, mtp_module = options.at(1) != 0;
  const double sbh = s * b * value(values, "Dmodel");
  const double norms = 4 * sbh;
  const double block_inputs = 4 * sbh;
  const double masks = dropout ? 2 * sbh : 0;
  const double mtp = mtp_module ? 2 * sbh + 2 * sbh + 4 * sbh : 0;
  return {.replicated = norms + block_inputs + masks + mtp,
          .recomputed = (mtp_module ? 4 : 2) * sbh};
}

}  // namespace

report::BlockActivations block_activations(const BlockSpec& spec, bool dropout) {
  const bool mtp = spec.kind == BlockKind::kMtp;
  report::BlockActivations a;
  a.terms.push_back({frame_activations, {dropout, mtp}});
  a.terms.push_back({spec.mixer->activations, spec.mixer_options});
  if (spec.mlp) a.terms.push_back({spec.mlp->activations, spec.mlp_options});
  return a;
}

}  // namespace stg::models
