#include "stg/models/flag_binding.h"

#include <algorithm>
#include <limits>

namespace stg::models {

void bind_dims(Workload& w, const std::vector<Dim>& dims) {
  for (const Dim& d : dims) {
    const int64_t v = d.given.value_or(d.fallback);
    require(v >= 1,
            std::string(d.flag) + " " + num(v) + " is not a valid size: use a whole number >= 1");
    w.values.by_symbol[d.symbol] = v;
    w.values.flag_of[d.symbol] = d.flag;
  }
}

void bind_degree(Workload& w, const char* symbol, const char* flag, int64_t value) {
  w.values.by_symbol[symbol] = value;
  w.values.flag_of[symbol] = flag;
}

int zero_stage(const Options& o) {
  const int zero = o.zero_stage.value_or(o.weight_sharded ? 3 : 0);
  require(zero >= 0 && zero <= 3,
          "--zero_stage " + std::to_string(zero) + " is not valid: use 0, 1, 2 or 3");
  require(!o.weight_sharded || zero == 3,
          "--weight_sharded 1 is ZeRO stage 3: drop it or use --zero_stage 3");
  return zero;
}

mesh::Mesh make_mesh(const Model& m, const mesh::Degrees& degree) {
  // In the table's rank order, whatever order the model lists them in
  // (names the table lacks last, as listed).
  std::vector<ModelAxis> ordered = m.axes;
  std::stable_sort(ordered.begin(), ordered.end(), [](const ModelAxis& a, const ModelAxis& b) {
    auto place = [](const ModelAxis& x) {
      const int row = mesh::find_axis(x.name);
      return row < 0 ? std::numeric_limits<int>::max() : mesh::kAxes[row].rank_place;
    };
    return place(a) < place(b);
  });
  std::vector<mesh::MeshAxis> axes;
  for (const ModelAxis& a : ordered) {
    const int row = mesh::find_axis(a.name);
    if (row < 0)
      axes.push_back({a.name, a.symbol, 1, a.kind, "--" + a.name});
    else
      axes.push_back({a.name, a.symbol, degree.row(row), a.kind, mesh::kAxes[row].flag});
  }
  return mesh::Mesh(std::move(axes), degree.stages());
}

void bind_axes(Workload& w, const mesh::Degrees& degree,
               std::initializer_list<Spelling> spellings) {
  w.mesh = make_mesh(w.model, degree);
  for (int r = 0; r < mesh::kNumAxes; ++r) {
    const mesh::AxisSpec& a = mesh::kAxes[r];
    const int64_t value = a.kind == mesh::AxisKind::kStage ? w.mesh.stages() : degree.row(r);
    for (Spelling s : spellings)
      bind_degree(w, s == Spelling::kSeed ? a.seed_symbol : a.symbol, a.flag, value);
  }
}

graph::ShardingRule sharding_rule(const Workload& w) {
  graph::ShardingRule rule;
  for (int a : w.mesh.active()) rule.axes.push_back({a, w.mesh.axis(a).symbol});
  rule.degree_symbols = w.model.degree_symbols;
  rule.claim = w.model.claim;
  const mesh::Mesh& m = w.mesh;
  for (size_t k = 0; k < m.axis_products().size(); ++k) {
    const std::vector<int>& axes = m.axis_products()[k].axes;
    const int group = m.size() + static_cast<int>(m.stage_groups().size() + k);
    if (std::all_of(axes.begin(), axes.end(), [&](int a) { return m.axis(a).degree > 1; }))
      rule.fused.push_back({axes, group});
  }
  return rule;
}

std::map<std::string, expr::Expr> zero_bindings(int zero) {
  const expr::Expr dp = expr::Expr::symbol("dp"), one = expr::Expr::constant(1);
  return {{"fsdp", zero == 3 ? dp : one}, {"gshard", zero >= 2 ? dp : one}};
}

}  // namespace stg::models
