// The dense MLP as an MLP row (models/parts/mlp.h builds it): two matrices
// (GPT's GeLU MLP) or gated (LLaMA's SwiGLU); options: gated.
#include "stg/models/mlps/mlp_row.h"
#include "stg/models/parts/mlp.h"

namespace stg::models {

namespace {

graph::Graph build(const Layout& l, const std::vector<int64_t>& options, const PartChoices&, int,
                   FfnPorts& ports) {
  ports = {"ffn.", "ffn.x0", "ffn.xdown", "ffn.dxdown", "ffn.dx0"};
  return mlp(l, !options.empty() && options[0] != 0 ? MlpKind::kGated : MlpKind::kPlain);
}

// Korthikanti et al. 2022, §4.1: GeLU's input and output, or the fused
// SwiGLU's [gate|up] input and its output, 2 bytes each, split over tp.
report::ActivationBytes activations(const std::vector<int64_t>& options, const expr::Values& values,
                                    double s, double b) {
  const double sbf = s * b * report::bound_value(values, "Dff", 1);
  return {.split = (!options.empty() && options[0] != 0 ? 6 : 4) * sbf};
}

const MlpRow kDenseMlp = {
    .name = "mlp",
    .experts = false,
    .build = build,
    .activations = activations,
};

}  // namespace

const MlpRow& dense_mlp_row() { return kDenseMlp; }

}  // namespace stg::models
