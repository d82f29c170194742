// libFuzzer target: stg::expr::Expr::parse on arbitrary bytes, then str(),
// a round trip through the printer, and evaluate() with every free symbol
// bound. ExprError (malformed text, division by zero, overflow) is a correct
// answer; any other exception, a crash or a sanitizer report is a finding.
// Products of sums are expanded, so a short input such as (a+b)*(c+d)*...
// could take time and memory exponential in its length; the engine refuses
// expansions past 4096 terms (ExprError). The inputs that found this are
// fuzz/corpus/fuzz_expr/regression-*.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "stg/expr/expr.h"

using stg::expr::Expr;
using stg::expr::ExprError;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // long inputs only slow the search down
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Expr e;
  try {
    e = Expr::parse(text);
  } catch (const ExprError&) {
    return 0;
  }
  const std::string printed = e.str();
  // The printer's output must parse back to the same expression. Skipped for
  // long output: parsing a sum of n terms is quadratic in n (each '+' copies
  // the terms), which would only slow the search down.
  if (printed.size() <= 4096) {
    Expr again;
    try {
      again = Expr::parse(printed);
    } catch (const ExprError& err) {
      std::fprintf(stderr, "fuzz_expr: str() output does not parse: '%s' -> '%s': %s\n",
                   std::string(text).c_str(), printed.c_str(), err.what());
      std::abort();
    }
    if (!(again == e)) {
      std::fprintf(stderr, "fuzz_expr: round trip changed the expression: '%s' -> '%s' -> '%s'\n",
                   std::string(text).c_str(), printed.c_str(), again.str().c_str());
      std::abort();
    }
  }
  // Evaluate with two bindings: small positive values, and values that
  // include zero (division by zero must be an ExprError).
  for (int round = 0; round < 2; ++round) {
    std::map<std::string, int64_t> values;
    int64_t v = round == 0 ? 2 : 0;
    for (const std::string& s : e.free_symbols()) values[s] = round == 0 ? v++ : v++ % 3;
    try {
      (void)e.evaluate(values);
    } catch (const ExprError&) {
    }
  }
  // And with one symbol left unbound: an ExprError naming it.
  if (!e.free_symbols().empty()) {
    try {
      (void)e.evaluate({});
      std::fprintf(stderr, "fuzz_expr: evaluate() accepted unbound symbols in '%s'\n",
                   printed.c_str());
      std::abort();
    } catch (const ExprError&) {
    }
  }
  return 0;
}
