#include "stg/models/csv_model.h"

#include "stg/graph/csv_module.h"

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
  using mesh::AxisKind;
  m.axes = {{"dp", "dp", AxisKind::kData},
            {"tp", "tp", AxisKind::kTensor},
            {"sp", symbols.count("cp") ? "cp" : "sp", AxisKind::kSequence}};
  if (symbols.count("ep")) m.axes.push_back({"ep", "ep", AxisKind::kExpert});
  m.degree_symbols = {"dp", "tp", "cp", "sp", "ep"};
  m.claim = graph::ClaimRule::kEveryAxisInDim;
  m.num_blocks = 1;
  return m;
}

}  // namespace stg::models
