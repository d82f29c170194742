// Exact rationals over int64 with overflow detection.
//
// Every operation computes in 128 bits, where products of two int64 values
// and sums of two such products cannot overflow, then reduces by the gcd and
// only then checks that the result fits back into int64. So intermediate
// growth never raises a spurious overflow error.
#include <limits>
#include <string>

#include "stg/expr/expr.h"

namespace stg::expr {
namespace {

__extension__ typedef __int128 Wide;
__extension__ typedef unsigned __int128 UWide;

UWide magnitude(Wide v) { return v < 0 ? UWide(0) - UWide(v) : UWide(v); }

UWide gcd(UWide a, UWide b) {
  while (b != 0) {
    const UWide t = a % b;
    a = b;
    b = t;
  }
  return a;
}

bool fits(Wide v) {
  return v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max();
}

// Decimal text of a 128-bit value, for overflow messages.
std::string wide_str(Wide v) {
  if (v == 0) return "0";
  UWide m = magnitude(v);
  std::string digits;
  while (m != 0) {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(m % 10)));
    m /= 10;
  }
  return v < 0 ? "-" + digits : digits;
}

// Normalises num/den (den != 0, |num|,|den| < 2^127) into a Rational.
Rational make(Wide num, Wide den, const char* op) {
  if (den == 0) throw ExprError(std::string("division by zero in rational ") + op);
  if (den < 0) {
    num = -num;
    den = -den;
  }
  const UWide g = gcd(magnitude(num), UWide(den));
  if (g > 1) {
    num /= static_cast<Wide>(g);
    den /= static_cast<Wide>(g);
  }
  if (!fits(num) || !fits(den)) {
    throw ExprError(std::string("integer overflow in rational ") + op + ": " + wide_str(num) +
                    (den == 1 ? "" : "/" + wide_str(den)) + " does not fit in 64 bits");
  }
  return Rational(static_cast<int64_t>(num), static_cast<int64_t>(den));
}

}  // namespace

Rational::Rational(int64_t num, int64_t den) {
  if (den == 0) throw ExprError("division by zero: " + std::to_string(num) + "/0");
  if (den == 1) {  // fast path: already normalised
    num_ = num;
    den_ = 1;
    return;
  }
  // Normalise in 128 bits so INT64_MIN in either position is handled.
  Wide n = num, d = den;
  if (d < 0) {
    n = -n;
    d = -d;
  }
  const UWide g = gcd(magnitude(n), UWide(d));
  n /= static_cast<Wide>(g);
  d /= static_cast<Wide>(g);
  if (!fits(n) || !fits(d)) {
    throw ExprError("integer overflow normalising rational " + std::to_string(num) + "/" +
                    std::to_string(den));
  }
  num_ = static_cast<int64_t>(n);
  den_ = static_cast<int64_t>(d);
}

Rational Rational::operator+(const Rational& o) const {
  if (den_ == 1 && o.den_ == 1) {
    int64_t r;
    if (!__builtin_add_overflow(num_, o.num_, &r)) return Rational(r);
  }
  return make(Wide(num_) * o.den_ + Wide(o.num_) * den_, Wide(den_) * o.den_, "addition");
}

Rational Rational::operator-(const Rational& o) const {
  if (den_ == 1 && o.den_ == 1) {
    int64_t r;
    if (!__builtin_sub_overflow(num_, o.num_, &r)) return Rational(r);
  }
  return make(Wide(num_) * o.den_ - Wide(o.num_) * den_, Wide(den_) * o.den_, "subtraction");
}

Rational Rational::operator*(const Rational& o) const {
  if (den_ == 1 && o.den_ == 1) {
    int64_t r;
    if (!__builtin_mul_overflow(num_, o.num_, &r)) return Rational(r);
  }
  return make(Wide(num_) * o.num_, Wide(den_) * o.den_, "multiplication");
}

Rational Rational::operator/(const Rational& o) const {
  if (o.num_ == 0) throw ExprError("division by zero: " + str() + "/0");
  return make(Wide(num_) * o.den_, Wide(den_) * o.num_, "division");
}

Rational Rational::operator-() const {
  if (num_ == std::numeric_limits<int64_t>::min()) {
    throw ExprError("integer overflow negating " + str());
  }
  Rational r;
  r.num_ = -num_;
  r.den_ = den_;
  return r;
}

std::string Rational::str() const {
  return den_ == 1 ? std::to_string(num_) : std::to_string(num_) + "/" + std::to_string(den_);
}

}  // namespace stg::expr
