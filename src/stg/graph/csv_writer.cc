#include "stg/graph/csv_writer.h"

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "stg/graph/comm.h"
#include "stg/graph/csv_module.h"
#include "stg/graph/op.h"

namespace stg::graph {
namespace {

// The id as a reference sheet writes it.
std::string id_of(const Tensor& t) {
  return t.revision == 0 ? t.name : t.name + "@" + std::to_string(t.revision);
}

std::string ref(const Graph& g, int i) { return i < 0 ? "" : id_of(g[i]); }

std::string view(const std::optional<Shape>& shape) { return shape ? shape_str(*shape) : ""; }

// The op_attr column, in the forms the reader parses.
std::string op_attr(const Tensor& t) {
  switch (t.op) {
    case Op::kEinsum:
      return t.einsum;
    case Op::kElementwise:
    case Op::kElementwise2:
      return t.amplifier.str();
    case Op::kSlice:
      return std::to_string(t.axis) + ":" + t.factor.str();
    case Op::kBroadcast:
      return std::to_string(t.axis) + "*" + t.factor.str();
    case Op::kConcat:
      return std::to_string(t.axis);
    case Op::kCustom:
      return t.factor.str();
    case Op::kCollective:
      return coll_name(t.comm.type);
    default:
      return "";
  }
}

// JSON as Python's json.dumps writes it ({"a": [1, 2]}), as in the
// reference's sheets.
std::string json_text(const nlohmann::json& v) {
  auto dump = [](const nlohmann::json& x) {
    return x.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  std::string out;
  if (v.is_array()) {
    for (const auto& e : v) out += (out.empty() ? "" : ", ") + json_text(e);
    return "[" + out + "]";
  }
  if (v.is_object()) {
    for (const auto& [key, value] : v.items())
      out += (out.empty() ? "" : ", ") + dump(key) + ": " + json_text(value);
    return "{" + out + "}";
  }
  return dump(v);
}

// extra_attr: data_deps, then stg's keys whose field differs from what the
// reader would infer (whose rule reads the inputs' flags as written).
std::string extra_attr(const Graph& g, const Tensor& t) {
  std::vector<std::pair<std::string, nlohmann::json>> items;
  if (!t.extra_deps.empty()) {
    nlohmann::json deps = nlohmann::json::array();
    for (int d : t.extra_deps) deps.push_back(ref(g, d));
    items.emplace_back("data_deps", std::move(deps));
  }
  Tensor inferred = t;
  infer_extra_fields(inferred, g.tensors());
  for (const ExtraAttrKey& key : extra_attr_keys())
    if (key.differs(t, inferred)) items.emplace_back(key.name, key.write(t));
  if (items.empty()) return "";
  std::string out;
  for (const auto& [key, value] : items)
    out += (out.empty() ? "" : ", ") + json_text(key) + ": " + json_text(value);
  return "{" + out + "}";
}

// RFC 4180: quoted when it holds a comma, a quote or a line end; quotes
// doubled.
std::string csv_field(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string write_module_csv(const Graph& g) {
  std::string out =
      "id,require_grads,x1,x2,op_type,op_attr,x1_shape,x1_hidden,x2_shape,x2_hidden,grad_of,"
      "extra_attr\n";
  for (const Tensor& t : g.tensors()) {
    const std::array<std::string, 12> fields = {id_of(t),          t.require_grads ? "Y" : "N",
                                                ref(g, t.x1),      ref(g, t.x2),
                                                op_code(t.op),     op_attr(t),
                                                view(t.x1_shape),  view(t.x1_hidden),
                                                view(t.x2_shape),  view(t.x2_hidden),
                                                ref(g, t.grad_of), extra_attr(g, t)};
    for (size_t c = 0; c < fields.size(); ++c) {
      if (c > 0) out += ',';
      out += csv_field(fields[c]);
    }
    out += '\n';
  }
  return out;
}

}  // namespace stg::graph
