// Numbers bound to the symbols of a model, and exact evaluation of sizes.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

#include "stg/expr/expr.h"

namespace stg::expr {

// An input that makes a size fractional, negative or unrepresentable; the
// message names the dimension and the numbers it was evaluated with.
class SizeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Values {
  std::map<std::string, int64_t> by_symbol;
  // The command-line flag that sets each symbol, for error messages.
  std::map<std::string, std::string> flag_of;
};

// Evaluates `e` to a whole, non-negative number or throws SizeError naming
// `what` (e.g. "dimension Dmodel/tp of tensor x@0").
int64_t whole_count(const Expr& e, const Values& values, const std::string& what);

// The error for `what` (= `e`) that cannot be evaluated (`reason`, e.g. a
// product that overflows 64 bits): names the flags of its symbols and their
// values, and says to make them smaller.
SizeError overflow_error(const Expr& e, const Values& values, const std::string& what,
                         const std::string& reason);

}  // namespace stg::expr
