// Expr algebra: canonical Laurent polynomials over exact rationals.
#include "stg/expr/expr.h"

#include <limits>
#include <string>
#include <utility>

namespace stg::expr {
namespace {

using Monomial = Expr::Monomial;

int add_exponents(int a, int b, const std::string& name) {
  int r;
  if (__builtin_add_overflow(a, b, &r)) {
    throw ExprError("integer overflow in exponent of '" + name + "'");
  }
  return r;
}

int mul_exponents(int a, int b, const std::string& name) {
  int r;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw ExprError("integer overflow in exponent of '" + name + "'");
  }
  return r;
}

// Product of two monomials; exponents that cancel are removed.
Monomial multiply(const Monomial& a, const Monomial& b) {
  Monomial r = a;
  for (const auto& [name, exp] : b) {
    auto [it, inserted] = r.try_emplace(name, exp);
    if (inserted) continue;
    it->second = add_exponents(it->second, exp, name);
    if (it->second == 0) r.erase(it);
  }
  return r;
}

Monomial raise(const Monomial& m, int exponent) {
  Monomial r;
  if (exponent == 0) return r;
  for (const auto& [name, exp] : m) r.emplace(name, mul_exponents(exp, exponent, name));
  return r;
}

// base**exponent by repeated squaring; a negative exponent inverts first.
Rational rational_pow(Rational base, int exponent) {
  if (exponent < 0) {
    if (base.is_zero()) throw ExprError("division by zero: 0 raised to a negative power");
    base = Rational(1) / base;
    // Negate via int64 so INT_MIN does not overflow.
    int64_t e = -static_cast<int64_t>(exponent);
    Rational result(1);
    while (e > 0) {
      if (e & 1) result = result * base;
      e >>= 1;
      if (e > 0) base = base * base;
    }
    return result;
  }
  Rational result(1);
  while (exponent > 0) {
    if (exponent & 1) result = result * base;
    exponent >>= 1;
    if (exponent > 0) base = base * base;
  }
  return result;
}

}  // namespace

const Expr::Terms& Expr::empty_terms() {
  static const Terms empty;
  return empty;
}

Expr::Terms& Expr::mutable_terms() {
  if (!terms_) {
    terms_ = std::make_shared<Terms>();
  } else if (terms_.use_count() > 1) {
    terms_ = std::make_shared<Terms>(*terms_);
  }
  return *terms_;
}

void Expr::add_term(const Monomial& m, const Rational& coeff) {
  if (coeff.is_zero()) return;
  Terms& terms = mutable_terms();
  auto [it, inserted] = terms.try_emplace(m, coeff);
  if (inserted) return;
  it->second = it->second + coeff;
  if (it->second.is_zero()) terms.erase(it);
}

Expr Expr::constant(Rational value) {
  Expr e;
  e.add_term({}, value);
  return e;
}

Expr Expr::symbol(const std::string& name) {
  if (name.empty()) throw ExprError("empty symbol name");
  Expr e;
  e.mutable_terms().emplace(Monomial{{name, 1}}, Rational(1));
  return e;
}

Expr Expr::operator+(const Expr& o) const {
  Expr r = *this;
  for (const auto& [m, c] : o.terms()) r.add_term(m, c);
  return r;
}

Expr Expr::operator-(const Expr& o) const {
  Expr r = *this;
  for (const auto& [m, c] : o.terms()) r.add_term(m, -c);
  return r;
}

Expr Expr::operator*(const Expr& o) const {
  // Shapes are products of a few sums; a product of many sums expands
  // exponentially (found by fuzzing), so refuse expansions past this size.
  constexpr size_t kMaxTerms = 4096;
  if (terms().size() * o.terms().size() > kMaxTerms)
    throw ExprError("expression too large: a product would expand to more than " +
                    std::to_string(kMaxTerms) + " terms");
  Expr r;
  for (const auto& [ma, ca] : terms()) {
    for (const auto& [mb, cb] : o.terms()) r.add_term(multiply(ma, mb), ca * cb);
  }
  return r;
}

Expr Expr::operator/(const Expr& o) const {
  if (o.terms().empty()) throw ExprError("division by zero: (" + str() + ")/0");
  if (o.terms().size() > 1) {
    throw ExprError("division by a sum is not supported: (" + str() + ")/(" + o.str() +
                    "); the divisor must be a single term");
  }
  const auto& [dm, dc] = *o.terms().begin();
  const Monomial inverse = raise(dm, -1);
  const Rational inverse_coeff = Rational(1) / dc;
  Expr r;
  for (const auto& [m, c] : terms()) r.add_term(multiply(m, inverse), c * inverse_coeff);
  return r;
}

Expr Expr::pow(int exponent) const {
  if (exponent == 0) return constant(1);  // like sympy, 0**0 == 1
  if (terms().empty()) {
    if (exponent < 0) throw ExprError("division by zero: 0 raised to a negative power");
    return *this;
  }
  if (terms().size() == 1) {
    const auto& [m, c] = *terms().begin();
    Expr r;
    r.add_term(raise(m, exponent), rational_pow(c, exponent));
    return r;
  }
  if (exponent < 0) {
    throw ExprError("negative power of a sum is not supported: (" + str() + ")**" +
                    std::to_string(exponent));
  }
  Expr result = constant(1);
  Expr base = *this;
  while (exponent > 0) {
    if (exponent & 1) result = result * base;
    exponent >>= 1;
    if (exponent > 0) base = base * base;
  }
  return result;
}

bool Expr::is_constant() const {
  return terms().empty() || (terms().size() == 1 && terms().begin()->first.empty());
}

bool Expr::has_symbol(const std::string& name) const {
  for (const auto& [m, c] : terms()) {
    if (m.contains(name)) return true;
  }
  return false;
}

std::set<std::string> Expr::free_symbols() const {
  std::set<std::string> names;
  for (const auto& [m, c] : terms()) {
    for (const auto& [name, exp] : m) names.insert(name);
  }
  return names;
}

Expr Expr::substitute(const std::string& name, const Expr& by) const {
  if (!has_symbol(name)) return *this;
  return substitute(std::map<std::string, Expr>{{name, by}});
}

// Simultaneous substitution: replacements are not themselves substituted
// again, so {a: b, b: a} swaps the two symbols.
Expr Expr::substitute(const std::map<std::string, Expr>& by) const {
  Expr r;
  for (const auto& [m, c] : terms()) {
    Monomial kept;  // symbols without a replacement
    Expr replaced = constant(c);
    for (const auto& [name, exp] : m) {
      auto it = by.find(name);
      if (it == by.end()) {
        kept.emplace(name, exp);
      } else {
        replaced = replaced * it->second.pow(exp);
      }
    }
    for (const auto& [rm, rc] : replaced.terms()) r.add_term(multiply(rm, kept), rc);
  }
  return r;
}

Rational Expr::evaluate(const std::map<std::string, int64_t>& values) const {
  Rational total(0);
  for (const auto& [m, c] : terms()) {
    Rational term = c;
    for (const auto& [name, exp] : m) {
      auto it = values.find(name);
      if (it == values.end()) throw ExprError("unbound symbol '" + name + "'");
      if (it->second == 0 && exp < 0) {
        throw ExprError("division by zero: symbol '" + name + "' is 0 in " + str());
      }
      term = term * rational_pow(Rational(it->second), exp);
    }
    total = total + term;
  }
  return total;
}

Expr product(const std::vector<Expr>& factors) {
  Expr r = Expr::constant(1);
  for (const Expr& f : factors) r = r * f;
  return r;
}

}  // namespace stg::expr
