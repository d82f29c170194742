#include "stg/sweep/fast_expr.h"

#include <cmath>
#include <numeric>

namespace stg::sweep {

int Symbols::index(const std::string& name) {
  const auto it = index_.find(name);
  if (it != index_.end()) return it->second;
  const int i = size();
  index_.emplace(name, i);
  return i;
}

FastExpr::FastExpr(const expr::Expr& e, Symbols& symbols) {
  for (const auto& [monomial, coeff] : e.terms()) {
    Term t;
    t.num = coeff.num();
    t.den = coeff.den();
    for (const auto& [name, exponent] : monomial)
      t.factors.push_back({symbols.index(name), exponent});
    terms_.push_back(std::move(t));
  }
}

double FastExpr::value(const std::vector<int64_t>& v) const {
  double sum = 0;
  for (const Term& t : terms_) {
    double x = static_cast<double>(t.num) / static_cast<double>(t.den);
    for (const auto& [i, e] : t.factors) {
      const double s = static_cast<double>(v[i]);
      if (e > 0)
        for (int k = 0; k < e; ++k) x *= s;
      else
        for (int k = 0; k < -e; ++k) x /= s;
    }
    sum += x;
  }
  return sum;
}

namespace {

using Wide = __int128;

Wide gcd(Wide a, Wide b) {
  if (a < 0) a = -a;
  while (b != 0) {
    const Wide r = a % b;
    a = b;
    b = r < 0 ? -r : r;
  }
  return a;
}

}  // namespace

std::optional<bool> FastExpr::whole(const std::vector<int64_t>& v) const {
  // Sum p/q exactly in 128 bits; on overflow, the exact engine decides.
  Wide p = 0, q = 1;
  bool overflow = false;
  for (const Term& t : terms_) {
    Wide n = t.num, d = t.den;
    for (const auto& [i, e] : t.factors)
      for (int k = 0; k < (e > 0 ? e : -e); ++k)
        overflow |= __builtin_mul_overflow(e > 0 ? n : d, static_cast<Wide>(v[i]), e > 0 ? &n : &d);
    if (d == 0) return false;
    Wide a, b, c;
    overflow |= __builtin_mul_overflow(p, d, &a);
    overflow |= __builtin_mul_overflow(n, q, &b);
    overflow |= __builtin_add_overflow(a, b, &c);
    overflow |= __builtin_mul_overflow(q, d, &q);
    if (overflow) break;
    p = c;
    const Wide g = gcd(p, q);
    if (g > 1) {
      p /= g;
      q /= g;
    }
  }
  if (!overflow) return p >= 0 && p % q == 0;
  return std::nullopt;
}

bool exact_whole(const expr::Expr& e, const Symbols& symbols, const std::vector<int64_t>& v) {
  std::map<std::string, int64_t> named;
  for (const auto& [name, i] : symbols.names())
    if (i < static_cast<int>(v.size())) named[name] = v[i];
  try {
    const expr::Rational r = e.evaluate(named);
    return r.is_integer() && r.num() >= 0;
  } catch (const expr::ExprError&) {
    return false;  // too large to evaluate: lowering would refuse it too
  }
}

}  // namespace stg::sweep
