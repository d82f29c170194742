#include "stg/models/model_axes.h"

#include <algorithm>

namespace stg::models {
namespace {

ModelAxis row_axis(const mesh::AxisSpec& a, Spelling spelling) {
  return {a.name, spelling == Spelling::kSeed ? a.seed_symbol : a.symbol, a.kind};
}

}  // namespace

ModelAxis model_axis(mesh::AxisName axis, Spelling spelling) {
  return row_axis(mesh::axis_spec(axis), spelling);
}

std::vector<ModelAxis> common_axes(Spelling spelling) {
  std::vector<ModelAxis> out;
  for (int r : mesh::rank_order()) {
    const mesh::AxisSpec& a = mesh::kAxes[r];
    if (!a.opt_in && a.kind != mesh::AxisKind::kStage) out.push_back(row_axis(a, spelling));
  }
  return out;
}

std::vector<std::string> all_degree_symbols() {
  std::vector<std::string> out;
  for (int r : mesh::rank_order()) {
    const mesh::AxisSpec& a = mesh::kAxes[r];
    if (a.kind == mesh::AxisKind::kStage) continue;
    for (const char* s : {a.symbol, a.seed_symbol})
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

std::vector<std::string> symbols_of(const std::vector<ModelAxis>& axes) {
  std::vector<std::string> out;
  for (const ModelAxis& a : axes) out.push_back(a.symbol);
  return out;
}

}  // namespace stg::models
