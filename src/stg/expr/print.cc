// sympy-style printing: "Batch/dp", "Seq/(cp*tp)", "2*Dff*Dmodel/tp + 4*Dmodel**2/tp".
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "stg/expr/expr.h"

namespace stg::expr {
namespace {

std::string factor(const std::string& name, int exp) {
  return exp == 1 ? name : name + "**" + std::to_string(exp);
}

// Text of |coeff| * monomial. std::map orders symbol names bytewise, which is
// the plain ASCII order sympy uses here (uppercase before lowercase).
std::string magnitude_str(const Expr::Monomial& m, const Rational& coeff) {
  // |num| as unsigned text so INT64_MIN prints correctly.
  const uint64_t num_mag =
      coeff.num() < 0 ? 0 - static_cast<uint64_t>(coeff.num()) : static_cast<uint64_t>(coeff.num());

  std::string numer;
  std::vector<std::string> denom;
  if (coeff.den() != 1) denom.push_back(std::to_string(coeff.den()));
  for (const auto& [name, exp] : m) {
    if (exp > 0) {
      if (!numer.empty()) numer += '*';
      numer += factor(name, exp);
    } else {
      denom.push_back(factor(name, -exp));
    }
  }
  if (numer.empty()) {
    numer = std::to_string(num_mag);
  } else if (num_mag != 1) {
    numer = std::to_string(num_mag) + "*" + numer;
  }
  if (denom.empty()) return numer;
  if (denom.size() == 1) return numer + "/" + denom.front();
  std::string text = numer + "/(";
  for (size_t i = 0; i < denom.size(); ++i) {
    if (i > 0) text += '*';
    text += denom[i];
  }
  return text + ")";
}

}  // namespace

std::string Expr::str() const {
  if (terms().empty()) return "0";
  if (terms().size() == 1) {
    const auto& [m, c] = *terms().begin();
    // Appended, not `"-" + string`: GCC 12 warns (-Wrestrict) on that form.
    std::string text = c.num() < 0 ? "-" : "";
    text += magnitude_str(m, c);
    return text;
  }
  // Terms sorted by their unsigned text so the order does not depend on signs.
  std::vector<std::pair<std::string, bool>> parts;  // text, negative
  parts.reserve(terms().size());
  for (const auto& [m, c] : terms()) parts.emplace_back(magnitude_str(m, c), c.num() < 0);
  std::sort(parts.begin(), parts.end());
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto& [part, negative] = parts[i];
    if (i == 0) {
      text = negative ? "-" + part : part;
    } else {
      text += negative ? " - " : " + ";
      text += part;
    }
  }
  return text;
}

}  // namespace stg::expr
