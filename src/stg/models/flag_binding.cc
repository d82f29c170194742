#include "stg/models/flag_binding.h"

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

mesh::Mesh make_mesh(const Model& m, const std::map<std::string, int64_t>& degree, int64_t stages) {
  std::vector<mesh::MeshAxis> axes;
  for (const ModelAxis& a : m.axes) {
    auto it = degree.find(a.name);
    axes.push_back({a.name, a.symbol, it == degree.end() ? 1 : it->second, a.kind, "--" + a.name});
  }
  return mesh::Mesh(std::move(axes), stages);
}

graph::ShardingRule sharding_rule(const Workload& w) {
  graph::ShardingRule rule;
  for (int a : w.mesh.active()) rule.axes.push_back({a, w.mesh.axis(a).symbol});
  rule.degree_symbols = w.model.degree_symbols;
  rule.claim = w.model.claim;
  return rule;
}

std::map<std::string, expr::Expr> zero_bindings(int zero) {
  const expr::Expr dp = expr::Expr::symbol("dp"), one = expr::Expr::constant(1);
  return {{"fsdp", zero == 3 ? dp : one}, {"gshard", zero >= 2 ? dp : one}};
}

}  // namespace stg::models
