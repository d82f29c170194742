#include "stg/expr/values.h"

namespace stg::expr {

int64_t whole_count(const Expr& e, const Values& values, const std::string& what) {
  Rational r;
  try {
    r = e.evaluate(values.by_symbol);
  } catch (const ExprError& err) {
    throw SizeError(what + " (" + e.str() + "): " + err.what());
  }
  if (r.is_integer() && r.num() >= 0) return r.num();
  std::string numbers;
  for (const std::string& s : e.free_symbols()) {
    auto flag = values.flag_of.find(s);
    auto value = values.by_symbol.find(s);
    if (!numbers.empty()) numbers += ' ';
    numbers += (flag != values.flag_of.end() ? flag->second : s) + " " +
               (value != values.by_symbol.end() ? std::to_string(value->second) : "?");
  }
  throw SizeError(what + " is " + e.str() + " = " + r.str() +
                  ", not a whole number: choose values that divide evenly (now " + numbers + ")");
}

}  // namespace stg::expr
