#include "stg/graph/op.h"

#include <map>

namespace stg::graph {
namespace {

using expr::Expr;

[[noreturn]] void fail(const Tensor& t, const std::string& why) {
  throw GraphError("tensor " + t.id() + " (" + op_code(t.op) + "): " + why);
}

const Shape& need(const Tensor& t, const std::optional<Shape>& s, const char* what) {
  if (!s) fail(t, std::string("missing ") + what);
  return *s;
}

int checked_axis(const Tensor& t, const Shape& shape) {
  int axis = t.axis < 0 ? t.axis + static_cast<int>(shape.size()) : t.axis;
  if (axis < 0 || axis >= static_cast<int>(shape.size())) fail(t, "axis out of range");
  return axis;
}

OpResult einsum(const Tensor& t) {
  const Shape& a = need(t, t.x1_shape, "x1_shape");
  const Shape& b = need(t, t.x2_shape, "x2_shape");
  const auto arrow = t.einsum.find("->");
  const auto comma = t.einsum.find(',');
  if (arrow == std::string::npos || comma == std::string::npos || comma > arrow)
    fail(t, "einsum '" + t.einsum + "' is not of the form 'ab,bc->ac'");
  const std::string la = t.einsum.substr(0, comma);
  const std::string lb = t.einsum.substr(comma + 1, arrow - comma - 1);
  const std::string ly = t.einsum.substr(arrow + 2);
  if (la.size() != a.size() || lb.size() != b.size())
    fail(t, "einsum '" + t.einsum + "' does not match the input ranks");
  std::map<char, Expr> dim_of;
  auto bind = [&](const std::string& letters, const Shape& shape) {
    for (size_t i = 0; i < letters.size(); ++i) {
      auto [it, fresh] = dim_of.emplace(letters[i], shape[i]);
      if (!fresh && !(it->second == shape[i]))
        fail(t, std::string("einsum letter '") + letters[i] + "' is both " + it->second.str() +
                    " and " + shape[i].str());
    }
  };
  bind(la, a);
  bind(lb, b);
  OpResult r;
  for (char c : ly) {
    auto it = dim_of.find(c);
    if (it == dim_of.end()) fail(t, std::string("einsum output letter '") + c + "' is unbound");
    r.y_shape.push_back(it->second);
  }
  for (char c : la) {
    if (ly.find(c) != std::string::npos) continue;
    if (lb.find(c) == std::string::npos) fail(t, std::string("letter '") + c + "' is dropped");
    r.y_hidden.push_back(dim_of[c]);
  }
  r.num_ops = expr::product(r.y_shape) * expr::product(r.y_hidden);
  return r;
}

OpResult same_shape_binary(const Tensor& t, expr::Rational ops_per_element) {
  const Shape& a = need(t, t.x1_shape, "x1_shape");
  const Shape& b = need(t, t.x2_shape, "x2_shape");
  if (a != b) fail(t, "inputs have different shapes");
  const Shape& h = need(t, t.x1_hidden, "x1_hidden");
  return {a, h, expr::product(a) * Expr::constant(ops_per_element)};
}

}  // namespace

const char* op_code(Op op) {
  switch (op) {
    case Op::kPlaceholder:
      return "T";
    case Op::kEinsum:
      return "M";
    case Op::kAdd:
      return "A";
    case Op::kElementwise:
      return "E";
    case Op::kElementwise2:
      return "E2";
    case Op::kIdentity:
      return "I";
    case Op::kReshape:
      return "R";
    case Op::kBroadcast:
      return "B";
    case Op::kSlice:
      return "SLICE";
    case Op::kConcat:
      return "C";
    case Op::kCustom:
      return "CUSTOM";
    case Op::kShadow:
      return "S";
    case Op::kCollective:
      return "COLL";
    case Op::kSend:
      return "SEND";
    case Op::kRecv:
      return "RECV";
  }
  return "?";
}

const char* coll_name(CollType type) {
  switch (type) {
    case CollType::kAllReduce:
      return "ALL_REDUCE";
    case CollType::kAllGather:
      return "ALL_GATHER";
    case CollType::kReduceScatter:
      return "REDUCE_SCATTER";
    case CollType::kAllToAll:
      return "ALL_TO_ALL";
  }
  return "?";
}

OpResult evaluate_op(const Tensor& t) {
  switch (t.op) {
    case Op::kPlaceholder:
    case Op::kIdentity:
    case Op::kShadow:
    case Op::kSend:
    case Op::kRecv:
      return {need(t, t.x1_shape, "x1_shape"), need(t, t.x1_hidden, "x1_hidden"), Expr()};
    case Op::kEinsum:
      return einsum(t);
    case Op::kAdd:
      return same_shape_binary(t, 1);
    case Op::kElementwise2:
      return same_shape_binary(t, t.amplifier);
    case Op::kElementwise: {
      const Shape& a = need(t, t.x1_shape, "x1_shape");
      return {a, need(t, t.x1_hidden, "x1_hidden"), expr::product(a) * Expr::constant(t.amplifier)};
    }
    case Op::kReshape: {
      const Shape& a = need(t, t.x1_shape, "x1_shape");
      const Shape& b = need(t, t.x2_shape, "x2_shape");
      if (!(expr::product(a) == expr::product(b))) fail(t, "reshape changes the element count");
      return {b, need(t, t.x2_hidden, "x2_hidden"), expr::product(b)};
    }
    case Op::kBroadcast:
    case Op::kSlice: {
      Shape y = need(t, t.x1_shape, "x1_shape");
      const int axis = checked_axis(t, y);
      y[axis] = t.op == Op::kBroadcast ? y[axis] * t.factor : t.factor;
      Expr ops = expr::product(y);
      return {std::move(y), need(t, t.x1_hidden, "x1_hidden"), ops};
    }
    case Op::kConcat: {
      Shape y = need(t, t.x1_shape, "x1_shape");
      const Shape& b = need(t, t.x2_shape, "x2_shape");
      const int axis = checked_axis(t, y);
      if (b.size() != y.size()) fail(t, "concatenated inputs have different ranks");
      for (size_t i = 0; i < y.size(); ++i)
        if (static_cast<int>(i) != axis && !(y[i] == b[i]))
          fail(t, "concatenated inputs differ outside the axis");
      y[axis] = y[axis] + b[axis];
      Expr ops = expr::product(y);
      return {std::move(y), need(t, t.x1_hidden, "x1_hidden"), ops};
    }
    case Op::kCustom:
      return {need(t, t.x2_shape, "x2_shape"), need(t, t.x2_hidden, "x2_hidden"), t.factor};
    case Op::kCollective:
      return {need(t, t.x2_shape, "x2_shape"), need(t, t.x2_hidden, "x2_hidden"), Expr()};
  }
  fail(t, "unknown op");
}

}  // namespace stg::graph
