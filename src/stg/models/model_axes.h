// The axes of the table (mesh/axes.h) as a model declares them: which rows
// are in its mesh, in rank order, and how its shapes spell their degrees.
#pragma once

#include <string>
#include <vector>

#include "stg/mesh/axes.h"
#include "stg/models/model.h"

namespace stg::models {

// Which symbol a model's shapes use for an axis: AxisSpec::symbol (gpt,
// llama, moe) or AxisSpec::seed_symbol (the seed's transformer).
enum class Spelling { kLater, kSeed };

ModelAxis model_axis(mesh::AxisName axis, Spelling spelling);
// The mesh axes every model has (not opt-in, not the stages), in rank order.
std::vector<ModelAxis> common_axes(Spelling spelling);
// The opt-in axes whose symbol is in `used` (a module sheet's symbols).
template <class Set>
std::vector<ModelAxis> opt_in_axes_used(const Set& used);
// Every symbol of a mesh axis's degree in either spelling ("dp", "tp",
// "cp", "sp", "ep"): a model lists them all as degree symbols.
std::vector<std::string> all_degree_symbols();
// The symbols of `axes`, in order.
std::vector<std::string> symbols_of(const std::vector<ModelAxis>& axes);

template <class Set>
std::vector<ModelAxis> opt_in_axes_used(const Set& used) {
  std::vector<ModelAxis> out;
  for (int r : mesh::rank_order()) {
    const mesh::AxisSpec& a = mesh::kAxes[r];
    if (a.opt_in && used.count(a.symbol)) out.push_back({a.name, a.symbol, a.kind});
  }
  return out;
}

}  // namespace stg::models
