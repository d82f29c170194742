// Expressions of a plan template compiled for evaluation at many plans: the
// symbols become indices into a vector of values, so that one plan's figures
// cost a few multiplications each instead of map look-ups.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stg/expr/expr.h"

namespace stg::sweep {

// Symbol name -> index into a plan's values.
class Symbols {
 public:
  int index(const std::string& name);
  const std::map<std::string, int>& names() const { return index_; }
  int size() const { return static_cast<int>(index_.size()); }

 private:
  std::map<std::string, int> index_;
};

class FastExpr {
 public:
  FastExpr() = default;
  FastExpr(const expr::Expr& e, Symbols& symbols);

  // Approximate value (figures for tables).
  double value(const std::vector<int64_t>& values) const;
  // Whether the value is a whole number >= 0, exactly (a shape that
  // lowering would refuse is not); nothing when 128 bits cannot tell
  // (exact_whole can).
  std::optional<bool> whole(const std::vector<int64_t>& values) const;
  bool empty() const { return terms_.empty(); }

 private:
  struct Term {
    int64_t num = 0, den = 1;
    std::vector<std::pair<int, int>> factors;  // (symbol index, exponent)
  };
  std::vector<Term> terms_;
};

// Whether `e` at `values` (by symbol index) is a whole number >= 0, with
// exact arithmetic; false when it is too large to evaluate (lowering would
// refuse it too).
bool exact_whole(const expr::Expr& e, const Symbols& symbols, const std::vector<int64_t>& values);

}  // namespace stg::sweep
