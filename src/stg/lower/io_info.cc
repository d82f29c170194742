#include "stg/lower/io_info.h"

#include <charconv>
#include <cmath>

namespace stg::lower {

std::string python_float(double value) {
  char buf[64];
  if (std::fabs(value) < 1e16 && value == std::floor(value)) {
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<long long>(value));
    return std::string(buf, end) + ".0";
  }
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string s(buf, end);
  // Python writes exponents with at least two digits: 1e+16, 1.5e+20.
  return s;
}

TensorInfo io_info(const graph::Graph& g, int tensor, bool shadow, const Values& values,
                   const IoPolicy& policy, StrCache* strings) {
  // An identity stands for the tensor it forwards (through the collectives
  // or RECV that bring it, as named before communication was in the graph).
  if (!shadow && g[tensor].op == graph::Op::kIdentity && g[tensor].x1 >= 0)
    tensor = graph::carried(g, g[tensor].x1);
  const graph::Tensor& t = g[tensor];
  const graph::Shape& shape = g.result(tensor).y_shape;
  TensorInfo info;
  const std::string prefix = shadow ? "shadow_" : "";
  info.name = prefix + t.id();
  info.name_number_at = graph::number_after(t.number_at, prefix.size());
  info.name_step_at = graph::number_after(t.step_at, prefix.size());
  if (shape.empty()) info.name += '1';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) info.name += ',';
    const void* id = shape[i].identity();
    if (!strings || !id) {
      info.name += shape[i].str();
      continue;
    }
    auto [it, fresh] = strings->try_emplace(id);
    if (fresh) it->second = shape[i].str();
    info.name += it->second;
  }
  // Exact product of the dims' values (cheaper than multiplying expressions).
  expr::Rational exact = 1;
  try {
    for (const expr::Expr& dim : shape) exact = exact * dim.evaluate(values.by_symbol);
  } catch (const expr::ExprError&) {
    exact = expr::Rational(1, 2);  // let whole_count report it
  }
  const int64_t elements =
      exact.is_integer() && exact.num() >= 0
          ? exact.num()
          : whole_count(expr::product(shape), values, "size of tensor " + t.id());
  double size = static_cast<double>(elements);
  if (policy.mixed_precision && elements != 0)
    size = t.require_grads ? std::floor(size * 1.5) * 4 : std::floor(size * 0.5) * 4;
  if (t.require_grads) size += 4.0 * static_cast<double>(elements);  // Adam m and v
  info.size = python_float(size);
  return info;
}

}  // namespace stg::lower
