#include "stg/expr/values.h"

namespace stg::expr {

namespace {

// "--batch 1024 --din 51200 --seq 1024": the flags of e's symbols and their values.
std::string flag_values(const Expr& e, const Values& values) {
  std::string numbers;
  for (const std::string& s : e.free_symbols()) {
    auto flag = values.flag_of.find(s);
    auto value = values.by_symbol.find(s);
    if (!numbers.empty()) numbers += ' ';
    numbers += (flag != values.flag_of.end() ? flag->second : s) + " " +
               (value != values.by_symbol.end() ? std::to_string(value->second) : "?");
  }
  return numbers;
}

}  // namespace

SizeError overflow_error(const Expr& e, const Values& values, const std::string& what,
                         const std::string& reason) {
  return SizeError(what + " (" + e.str() + "): " + reason + ": use smaller values (now " +
                   flag_values(e, values) + ")");
}

int64_t whole_count(const Expr& e, const Values& values, const std::string& what) {
  Rational r;
  try {
    r = e.evaluate(values.by_symbol);
  } catch (const ExprError& err) {
    throw overflow_error(e, values, what, err.what());
  }
  if (r.is_integer() && r.num() >= 0) return r.num();
  throw SizeError(what + " is " + e.str() + " = " + r.str() +
                  ", not a whole number: choose values that divide evenly (now " +
                  flag_values(e, values) + ")");
}

}  // namespace stg::expr
