#include "stg/models/csv_model.h"

#include "stg/graph/csv_module.h"
#include "stg/models/model_axes.h"

namespace stg::models {

std::set<std::string> csv_model_symbols(const Model& model) {
  std::set<std::string> symbols;
  auto add = [&](const expr::Expr& e) {
    for (const std::string& s : e.free_symbols()) symbols.insert(s);
  };
  for (const graph::Tensor& t : model.graph.tensors()) {
    for (const auto* view : {&t.x1_shape, &t.x1_hidden, &t.x2_shape, &t.x2_hidden})
      if (*view)
        for (const expr::Expr& dim : **view) add(dim);
    add(t.factor);
  }
  return symbols;
}

Model build_csv_model(const std::string& path) {
  Model m;
  m.graph = graph::read_module_csv(path);  // placement: block 0 by default
  const std::set<std::string> symbols = csv_model_symbols(m);
  m.axes = common_axes(Spelling::kLater);
  for (ModelAxis& a : m.axes)  // a sheet may spell an axis as the seed did (sp)
    if (!symbols.count(a.symbol)) a.symbol = mesh::kAxes[mesh::find_axis(a.name)].seed_symbol;
  for (const ModelAxis& a : opt_in_axes_used(symbols)) m.axes.push_back(a);
  m.degree_symbols = all_degree_symbols();
  m.claim = graph::ClaimRule::kEveryAxisInDim;
  m.num_blocks = 1;
  return m;
}

}  // namespace stg::models
