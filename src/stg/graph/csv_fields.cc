#include "stg/graph/csv_fields.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <map>

namespace stg::graph::csv {

using expr::Expr;
using expr::Rational;

std::string rewrite_decimals(std::string_view text) {
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    const bool starts_number =
        (digit(text[i]) || (text[i] == '.' && i + 1 < text.size() && digit(text[i + 1]))) &&
        (i == 0 || !ident(text[i - 1]));
    if (!starts_number) {
      out += text[i++];
      continue;
    }
    std::string whole, frac;
    while (i < text.size() && digit(text[i])) whole += text[i++];
    if (i < text.size() && text[i] == '.') {
      ++i;
      while (i < text.size() && digit(text[i])) frac += text[i++];
      std::string num = whole + frac;
      num.erase(0, std::min(num.find_first_not_of('0'), num.size() - 1));
      out += "(" + num + "/1" + std::string(frac.size(), '0') + ")";
    } else {
      out += whole;
    }
  }
  return out;
}

Expr parse_expr(std::string_view text, const Where& at) {
  text = trim(text);
  if (text.empty()) fail(at, "empty expression");
  const std::string rewritten = rewrite_decimals(text);
  try {
    return Expr::parse(rewritten);
  } catch (const expr::ExprError& e) {
    // Expr's message quotes the text it parsed; quote the sheet's own.
    const std::string why = e.what();
    if (rewritten == text && why.starts_with("cannot parse expression '")) fail(at, why);
    fail(at, "cannot parse expression '" + std::string(text) + "': " + why);
  }
}

std::optional<Shape> parse_shape_field(std::string_view text, const Where& at) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  Shape shape;
  size_t start = 0;
  for (;;) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view dim = trim(text.substr(start, comma - start));
    if (dim.empty()) fail(at, "empty dimension in shape '" + std::string(text) + "'");
    shape.push_back(parse_expr(dim, at));
    if (comma == text.size()) break;
    start = comma + 1;
  }
  return shape;
}

int parse_int(std::string_view text, const Where& at, const char* what) {
  text = trim(text);
  int value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data() + (!text.empty() && text[0] == '+'), end, value);
  if (text.empty() || ec != std::errc() || ptr != end)
    fail(at, std::string("expected an integer ") + what + ", got '" + std::string(text) + "'");
  return value;
}

Rational parse_amplifier(std::string_view text, const Where& at) {
  if (trim(text).empty()) fail(at, "missing the number of operations per element (e.g. 5)");
  const Expr e = parse_expr(text, at);
  if (!e.is_constant())
    fail(at, "operations per element must be a number, got '" + std::string(trim(text)) + "'");
  const Rational value = e.evaluate({});
  if (value < Rational(0))
    fail(at, "operations per element must not be negative, got '" + std::string(trim(text)) + "'");
  return value;
}

std::pair<std::string, int> parse_id(std::string_view text, const Where& at) {
  text = trim(text);
  const size_t at_sign = text.find('@');
  std::string name(text.substr(0, at_sign));
  if (name.empty())
    fail(at, "empty tensor id" + (text.empty() ? "" : " in '" + std::string(text) + "'"));
  int rev = 0;
  if (at_sign != std::string_view::npos) {
    const std::string_view rev_text = text.substr(at_sign + 1);
    if (rev_text.find('@') != std::string_view::npos)
      fail(at, "tensor id '" + std::string(text) + "' has more than one '@'");
    rev = parse_int(rev_text, at, "revision after '@'");
    if (rev < 0) fail(at, "negative revision in tensor id '" + std::string(text) + "'");
  }
  return {std::move(name), rev};
}

std::string canonical_id(std::string_view text, const Where& at) {
  auto [name, rev] = parse_id(text, at);
  return name + "@" + std::to_string(rev);
}

std::optional<Op> op_of(std::string_view code) {
  static const std::map<std::string, Op, std::less<>> ops = {
      {"T", Op::kPlaceholder},   {"M", Op::kEinsum},        {"A", Op::kAdd},
      {"E", Op::kElementwise},   {"E2", Op::kElementwise2}, {"I", Op::kIdentity},
      {"R", Op::kReshape},       {"B", Op::kBroadcast},     {"SLICE", Op::kSlice},
      {"C", Op::kConcat},        {"CUSTOM", Op::kCustom},   {"S", Op::kShadow},
      {"COLL", Op::kCollective}, {"SEND", Op::kSend},       {"RECV", Op::kRecv}};
  auto it = ops.find(code);
  if (it == ops.end()) return std::nullopt;
  return it->second;
}

}  // namespace stg::graph::csv
