// Exact symbolic expressions for tensor shapes.
//
// An Expr is a Laurent polynomial with rational coefficients: a sum of terms
// coeff * prod(symbol^exponent) where exponents may be negative. That covers
// every shape expression the models need (`Batch/dp`, `Seq/(cp*tp)`,
// `3*Head/KVHead`, `2*Dff*Dmodel/tp + 4*Dmodel**2/tp`). No C++ computer-algebra
// library is packaged for Debian, and this small engine is all we need.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace stg::expr {

// Exact rational number with overflow-checked 64-bit (128-bit intermediate)
// arithmetic; always normalised (gcd 1, positive denominator).
class Rational {
 public:
  Rational() = default;
  Rational(int64_t value) : num_(value), den_(1) {}  // NOLINT: implicit by design
  Rational(int64_t num, int64_t den);

  int64_t num() const { return num_; }
  int64_t den() const { return den_; }
  bool is_integer() const { return den_ == 1; }
  bool is_zero() const { return num_ == 0; }

  Rational operator+(const Rational& o) const;
  Rational operator-(const Rational& o) const;
  Rational operator*(const Rational& o) const;
  Rational operator/(const Rational& o) const;
  Rational operator-() const;
  bool operator==(const Rational& o) const = default;
  auto operator<=>(const Rational& o) const;

  std::string str() const;  // "3", "-1/2"

 private:
  int64_t num_ = 0;
  int64_t den_ = 1;
};

// Defined inline: a deduced return type must be visible to every caller.
inline auto Rational::operator<=>(const Rational& o) const {
  // Denominators are positive, so cross-multiplying keeps the order; the
  // products fit in 128 bits.
  __extension__ typedef __int128 Wide;
  const Wide lhs = static_cast<Wide>(num_) * o.den_;
  const Wide rhs = static_cast<Wide>(o.num_) * den_;
  return lhs <=> rhs;
}

// Thrown on malformed text, division by zero, overflow, or an unbound
// symbol during evaluation.
class ExprError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Expr {
 public:
  // A monomial: symbol -> non-zero exponent (ordered, so canonical).
  using Monomial = std::map<std::string, int>;

  Expr() = default;  // zero
  static Expr constant(Rational value);
  static Expr symbol(const std::string& name);

  // Grammar: integers, identifiers ([A-Za-z_][A-Za-z0-9_]*), + - * / **
  // (integer exponents, may be negative), unary minus, parentheses.
  // Division by a sum is an error (not a Laurent polynomial).
  static Expr parse(std::string_view text);

  Expr operator+(const Expr& o) const;
  Expr operator-(const Expr& o) const;
  Expr operator*(const Expr& o) const;
  Expr operator/(const Expr& o) const;  // divisor must be a single term
  Expr pow(int exponent) const;         // negative only for single terms

  // Structural equality after canonicalisation.
  bool operator==(const Expr& o) const { return terms_ == o.terms_ || terms() == o.terms(); }
  bool operator<(const Expr& o) const { return terms() < o.terms(); }

  bool is_constant() const;
  bool is_zero() const { return terms().empty(); }
  bool has_symbol(const std::string& name) const;
  std::set<std::string> free_symbols() const;

  // Replace a symbol by another expression (or a symbol, or a number).
  Expr substitute(const std::string& name, const Expr& by) const;
  Expr substitute(const std::map<std::string, Expr>& by) const;

  // Exact value; throws ExprError naming the symbol if one is unbound.
  Rational evaluate(const std::map<std::string, int64_t>& values) const;

  // Printed like sympy's str(): terms joined by " + "/" - ", each term as
  // coefficient, numerator symbols (sorted, "**" powers) and "/" denominator
  // (parenthesised when it has more than one factor): "Seq/(cp*tp)".
  std::string str() const;

  // Shared representation: equal for copies of one expression, so callers
  // can memoise per expression (null for zero).
  const void* identity() const { return terms_.get(); }

  using Terms = std::map<Monomial, Rational>;
  const Terms& terms() const { return terms_ ? *terms_ : empty_terms(); }

 private:
  static const Terms& empty_terms();
  // The terms, unshared first so they can be changed.
  Terms& mutable_terms();
  // Accumulates coeff * m into the terms, dropping the term if it cancels.
  void add_term(const Monomial& m, const Rational& coeff);

  // Shared and immutable once built: shapes copy expressions a lot (every
  // replicated layer and micro-batch), so a copy is a reference count.
  std::shared_ptr<Terms> terms_;  // no zero coefficients; null is zero
};

// Product of a list of expressions (1 for an empty list).
Expr product(const std::vector<Expr>& factors);

}  // namespace stg::expr
