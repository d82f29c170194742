// stg's extra_attr keys of a module spreadsheet (csv_module.h): a JSON form
// per field type, then the table, and the values the reader infers.
#include <array>
#include <charconv>
#include <climits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "stg/graph/comm.h"
#include "stg/graph/csv_fields.h"
#include "stg/graph/csv_module.h"

namespace stg::graph {
namespace {

using csv::rewrite_decimals;
using csv::trim;
using expr::Expr;
using Json = nlohmann::json;

[[noreturn]] void expected(const std::string& what, const Json& got) {
  throw std::invalid_argument("expected " + what + ", got " + got.dump());
}

bool same(const auto& a, const auto& b) { return a == b; }
bool same(const Placement& a, const Placement& b) { return a.kind == b.kind && a.block == b.block; }

Json encode(bool value) { return value; }
void decode(const Json& v, bool& out) {
  if (!v.is_boolean()) expected("true or false", v);
  out = v.get<bool>();
}

Json encode(int value) { return value; }
void decode(const Json& v, int& out) {
  const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= INT_MAX
                    : v.is_number_integer()
                        ? v.get<int64_t>() >= INT_MIN && v.get<int64_t>() <= INT_MAX
                        : false;
  if (!fits) expected("an integer", v);
  out = static_cast<int>(v.get<int64_t>());
}

constexpr std::array<const char*, 6> kRoleNames = {"activation", "weight",    "gradient", "update",
                                                   "optimizer",  "persistent"};  // in Role's order
Json encode(Role role) { return kRoleNames.at(static_cast<size_t>(role)); }
void decode(const Json& v, Role& out) {
  for (size_t r = 0; r < kRoleNames.size(); ++r)
    if (v.is_string() && v.get<std::string>() == kRoleNames[r]) {
      out = static_cast<Role>(r);
      return;
    }
  expected(R"("activation", "weight", "gradient", "update", "optimizer" or "persistent")", v);
}

// A tensor's pass: the "backward" key says forward or backward; "phase"
// names the others ("backward_weight", "prefill", "decode:3").
bool forward_or_backward(Phase p) { return p == Phase::kForward || p == Phase::kBackwardInput; }
constexpr std::array<const char*, kNumPhases> kPhaseNames = {
    "forward", "backward_input", "backward_weight", "prefill", "decode"};  // in Phase's order
Json encode_phase(const Tensor& t) {
  std::string name = kPhaseNames.at(static_cast<size_t>(t.phase));
  if (t.phase == Phase::kDecode) {
    name += ':';
    name += std::to_string(t.phase_step);
  }
  return name;
}
void decode_phase(const Json& v, Tensor& t) {
  const std::string text = v.is_string() ? v.get<std::string>() : "";
  const std::string name = text.substr(0, text.find(':'));
  for (size_t p = 0; p < kPhaseNames.size(); ++p)
    if (name == kPhaseNames[p]) {
      t.phase = static_cast<Phase>(p);
      t.phase_step = 0;
      if (t.phase != Phase::kDecode && name == text) return;
      if (t.phase == Phase::kDecode && name != text) {
        int step = -1;
        std::from_chars(text.data() + name.size() + 1, text.data() + text.size(), step);
        if (step >= 0) {
          t.phase_step = step;
          return;
        }
      }
    }
  expected(R"("forward", "backward_input", "backward_weight", "prefill" or "decode:N")", v);
}

constexpr ExtraAttrKey kBackwardKey = {"backward",
                                       [](const Tensor& t, const Tensor& inferred) {
                                         return t.is_backward() != inferred.is_backward();
                                       },
                                       [](const Tensor& t) { return Json(t.is_backward()); },
                                       [](const Json& v, Tensor& t) {
                                         bool backward = false;
                                         decode(v, backward);
                                         t.phase =
                                             backward ? Phase::kBackwardInput : Phase::kForward;
                                       }};

constexpr ExtraAttrKey kPhaseKey = {
    "phase",
    [](const Tensor& t, const Tensor& inferred) {
      return !(forward_or_backward(t.phase) && forward_or_backward(inferred.phase)) &&
             (t.phase != inferred.phase || t.phase_step != inferred.phase_step);
    },
    encode_phase, decode_phase};

// "first", "last", "block:3"; the index of first and last only when not 0.
constexpr std::array<const char*, 3> kPlacementNames = {"first", "block", "last"};  // Kind order
Json encode(const Placement& p) {
  std::string text = kPlacementNames.at(static_cast<size_t>(p.kind));
  if (p.kind == Placement::Kind::kBlock || p.block != 0) {
    text += ':';
    text += std::to_string(p.block);
  }
  return text;
}
void decode(const Json& v, Placement& out) {
  const std::string text = v.is_string() ? v.get<std::string>() : "";
  const std::string_view kind = std::string_view(text).substr(0, text.find(':'));
  for (size_t k = 0; k < kPlacementNames.size(); ++k) {
    if (kind != kPlacementNames[k]) continue;
    int block = 0;
    if (kind.size() < text.size()) {
      const char* end = text.data() + text.size();
      const auto [ptr, ec] = std::from_chars(text.data() + kind.size() + 1, end, block);
      if (ec != std::errc() || ptr != end || block < 0) break;
    }
    out = {static_cast<Placement::Kind>(k), block};
    return;
  }
  expected(R"("first", "last" or "block:<index>")", v);
}

Json encode(const std::string& text) { return text; }
void decode(const Json& v, std::string& out) {
  if (!v.is_string()) expected("a string", v);
  out = v.get<std::string>();
}

// "stage:3", "axis:1:+1" (mesh::Peer::str).
Json encode(const mesh::Peer& peer) { return peer.str(); }
void decode(const Json& v, mesh::Peer& out) {
  const std::string text = v.is_string() ? v.get<std::string>() : "";
  auto number = [&](size_t from, size_t to, int& value) {
    const char* first = text.data() + from + (from < to && text[from] == '+');
    const auto [ptr, ec] = std::from_chars(first, text.data() + to, value);
    return from < to && ec == std::errc() && ptr == text.data() + to;
  };
  int a = 0, b = 0;
  if (text.starts_with("stage:") && number(6, text.size(), a) && a >= 0) {
    out = mesh::Peer::on_stage(a);
    return;
  }
  const size_t colon = text.find(':', 5);
  if (text.starts_with("axis:") && colon != std::string::npos && number(5, colon, a) && a >= 0 &&
      number(colon + 1, text.size(), b)) {
    out = mesh::Peer::along(a, b);
    return;
  }
  expected(R"("stage:<stage>" or "axis:<axis>:<offset>")", v);
}

Json encode(const Expr& e) { return e.str(); }
void decode(const Json& v, Expr& out) {
  if (v.is_number_integer()) {
    out = Expr::constant(v.get<int64_t>());
    return;
  }
  if (!v.is_string() || trim(v.get<std::string>()).empty())
    expected("an expression such as \"4*Seq**2*Dmodel/tp\"", v);
  const std::string text(trim(v.get<std::string>()));
  try {
    out = Expr::parse(rewrite_decimals(text));
  } catch (const expr::ExprError& e) {
    throw std::invalid_argument("cannot parse expression '" + text + "': " + e.what());
  }
}

// The field at `Path` of `t` (t.*p1.*p2...).
// clang-format off
template <auto... Path>
auto& field(auto& t) { return (t .* ... .* Path); }
// clang-format on

// The key of the Tensor field at `Path` (member pointers: &Tensor::flops,
// or &Tensor::comm, &Comm::tag), written and read in the JSON form of its
// type (the overloads above).
template <auto... Path>
constexpr ExtraAttrKey field_key(const char* name) {
  return {name,
          [](const Tensor& t, const Tensor& inferred) {
            return !same(field<Path...>(t), field<Path...>(inferred));
          },
          [](const Tensor& t) { return encode(field<Path...>(t)); },
          [](const Json& v, Tensor& t) { decode(v, field<Path...>(t)); }};
}

// In the order the writer writes them. A new Tensor field the reference's
// columns lack: one entry here, and its default in infer_extra_fields. (A
// collective's type is its op_attr.)
const ExtraAttrKey kExtraAttrKeys[] = {
    field_key<&Tensor::role>("role"),
    field_key<&Tensor::placement>("placement"),
    field_key<&Tensor::micro_batch>("micro_batch"),
    field_key<&Tensor::stage>("stage"),
    field_key<&Tensor::chunk>("chunk"),
    kBackwardKey,
    kPhaseKey,
    field_key<&Tensor::transient>("transient"),
    field_key<&Tensor::view>("view"),
    field_key<&Tensor::flops>("flops"),
    field_key<&Tensor::element_bytes>("element_bytes"),
    field_key<&Tensor::tied>("tied"),
    field_key<&Tensor::selective_recompute>("selective_recompute"),
    field_key<&Tensor::comm, &Comm::axis>("comm_axis"),
    field_key<&Tensor::comm, &Comm::peer>("peer"),
    field_key<&Tensor::comm, &Comm::tag>("tag"),
    field_key<&Tensor::comm, &Comm::label>("label"),
};

}  // namespace

std::span<const ExtraAttrKey> extra_attr_keys() { return kExtraAttrKeys; }

void infer_extra_fields(Tensor& t, const std::vector<Tensor>& tensors) {
  const bool grad_of_weight = t.grad_of >= 0 && tensors.at(t.grad_of).require_grads;
  t.role = t.require_grads ? Role::kWeight : grad_of_weight ? Role::kGradient : Role::kActivation;
  t.placement = Placement{};
  t.micro_batch = 0;
  t.stage = 0;
  t.chunk = 0;
  bool backward = t.grad_of >= 0;
  for (int in : {t.x1, t.x2})
    if (in >= 0) backward = backward || tensors.at(in).is_backward();
  for (int in : t.extra_deps) backward = backward || tensors.at(in).is_backward();
  t.phase = backward ? Phase::kBackwardInput : Phase::kForward;
  t.phase_step = 0;
  t.transient = false;
  t.view = false;
  t.flops = Expr();
  const CollType type = t.comm.type;  // op_attr
  t.comm = Comm{};
  t.comm.type = type;
}

}  // namespace stg::graph
