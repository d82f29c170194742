#include "stg/expr/expr.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <string>

namespace stg::expr {
namespace {

Expr P(std::string_view text) { return Expr::parse(text); }
Expr S(const std::string& name) { return Expr::symbol(name); }

// Predicate-formatter: the error message contains the expected text.
::testing::AssertionResult ErrorContains(const char*, const char* needle_expr,
                                         const std::string& message, const std::string& needle) {
  if (message.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "error message \"" << message << "\" does not contain " << needle_expr;
}

// Runs fn, expects ExprError, and returns its message.
template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const ExprError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected ExprError";
  return "";
}

// ---------------------------------------------------------------- Rational

TEST(RationalTest, Normalises) {
  EXPECT_EQ(Rational(6, 4), Rational(3, 2));
  EXPECT_EQ(Rational(3, -6).num(), -1);
  EXPECT_EQ(Rational(3, -6).den(), 2);
  EXPECT_EQ(Rational(0, -5), Rational(0));
  EXPECT_EQ(Rational(0, -5).den(), 1);
  EXPECT_TRUE(Rational(8, 4).is_integer());
  EXPECT_EQ(Rational(-1, 2).str(), "-1/2");
  EXPECT_EQ(Rational(3).str(), "3");
}

TEST(RationalTest, Arithmetic) {
  EXPECT_EQ(Rational(1, 2) + Rational(1, 3), Rational(5, 6));
  EXPECT_EQ(Rational(1, 2) - Rational(1, 3), Rational(1, 6));
  EXPECT_EQ(Rational(2, 3) * Rational(9, 4), Rational(3, 2));
  EXPECT_EQ(Rational(2, 3) / Rational(4, 9), Rational(3, 2));
  EXPECT_EQ(-Rational(2, 3), Rational(-2, 3));
  EXPECT_LT(Rational(1, 3), Rational(1, 2));
  EXPECT_GT(Rational(-1, 3), Rational(-1, 2));
  EXPECT_EQ(Rational(2, 4) <=> Rational(1, 2), std::strong_ordering::equal);
}

TEST(RationalTest, DivisionByZeroThrows) {
  EXPECT_THROW(Rational(1, 0), ExprError);
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { return Rational(1) / Rational(0); }),
                      "division by zero");
}

TEST(RationalTest, OverflowThrows) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([&] { return Rational(max) + Rational(1); }),
                      "integer overflow");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([&] { return Rational(min) - Rational(1); }),
                      "integer overflow");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([&] {
                        return Rational(int64_t{1} << 32) * Rational(int64_t{1} << 31);
                      }),
                      "integer overflow");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([&] { return -Rational(min); }), "integer overflow");
  EXPECT_PRED_FORMAT2(ErrorContains,
                      error_of([&] { return Rational(1, max) + Rational(1, max - 1); }),
                      "integer overflow");
  // Large intermediates that reduce back into range are fine.
  EXPECT_EQ(Rational(max, 3) * Rational(3, max), Rational(1));
  EXPECT_EQ(Rational(max) * Rational(1, max), Rational(1));
}

// ------------------------------------------------------------ Parse & print

TEST(ExprPrintTest, PrintsLikeSympy) {
  EXPECT_EQ(P("Batch/dp").str(), "Batch/dp");
  EXPECT_EQ(P("Seq/(cp*tp)").str(), "Seq/(cp*tp)");
  EXPECT_EQ(P("Seq/cp/tp").str(), "Seq/(cp*tp)");
  EXPECT_EQ(P("Dmodel/Head").str(), "Dmodel/Head");
  EXPECT_EQ(P("3*Head/tp").str(), "3*Head/tp");
  EXPECT_EQ(P("Dmodel**2/tp").str(), "Dmodel**2/tp");
  EXPECT_EQ(P("1/(cp*dp)").str(), "1/(cp*dp)");
  EXPECT_EQ(P("MicroBatch/dp").str(), "MicroBatch/dp");
  EXPECT_EQ(P("Dmodel*Dff*2/tp + Dmodel*Dmodel*4/tp").str(), "2*Dff*Dmodel/tp + 4*Dmodel**2/tp");
  EXPECT_EQ(P("Batch/(2*dp)").str(), "Batch/(2*dp)");
  EXPECT_EQ(P("1/tp").str(), "1/tp");
  EXPECT_EQ(P("2/(tp*dp)").str(), "2/(dp*tp)");
  EXPECT_EQ(P("1/tp**2").str(), "1/tp**2");
  EXPECT_EQ(P("x/(y**2*z)").str(), "x/(y**2*z)");
  EXPECT_EQ(P("-x").str(), "-x");
  EXPECT_EQ(P("-3*x/2").str(), "-3*x/2");
  EXPECT_EQ(P("5").str(), "5");
  EXPECT_EQ(P("-3").str(), "-3");
  EXPECT_EQ(P("1/2").str(), "1/2");
  EXPECT_EQ(P("x - x").str(), "0");
  EXPECT_EQ(Expr().str(), "0");
}

TEST(ExprPrintTest, SymbolsSortAsciiUppercaseFirst) {
  EXPECT_EQ(P("dp*Dmodel*Dff*b").str(), "Dff*Dmodel*b*dp");
}

TEST(ExprPrintTest, SumsSortedByTermTextWithSigns) {
  EXPECT_EQ(P("y + x").str(), "x + y");
  EXPECT_EQ(P("y - x").str(), "-x + y");
  EXPECT_EQ(P("x - y").str(), "x - y");
  // Digits sort before letters, and the sign does not take part in the order.
  EXPECT_EQ(P("x - 2*y - 1/2").str(), "-1/2 - 2*y + x");
  EXPECT_EQ(P("x - 1").str(), "-1 + x");
}

TEST(ExprParseTest, RoundTrips) {
  for (const char* text :
       {"Batch/dp", "Seq/(cp*tp)", "Dmodel/Head", "3*Head/tp", "Dmodel**2/tp", "1/(cp*dp)",
        "2*Dff*Dmodel/tp + 4*Dmodel**2/tp", "MicroBatch/dp", "Batch/(2*dp)", "-x + y", "x - y",
        "-2*y + x", "1/2", "-3", "0", "B2*a_1/(c**3*d)", "-3*x/2"}) {
    const Expr e = P(text);
    EXPECT_EQ(e.str(), text);
    EXPECT_EQ(P(e.str()), e) << text;
  }
}

TEST(ExprParseTest, WhitespacePrecedenceAndExponents) {
  EXPECT_EQ(P("  Batch /\tdp "), P("Batch/dp"));
  EXPECT_EQ(P("1 + 2*3"), Expr::constant(7));
  EXPECT_EQ(P("(1 + 2)*3"), Expr::constant(9));
  EXPECT_EQ(P("-x**2"), Expr::constant(-1) * S("x").pow(2));
  EXPECT_EQ(P("x**(-1)"), Expr::constant(1) / S("x"));
  EXPECT_EQ(P("x**-2"), P("1/x**2"));
  EXPECT_EQ(P("(x+1)**2"), P("x**2 + 2*x + 1"));
  EXPECT_EQ(P("2**10"), Expr::constant(1024));
  EXPECT_EQ(P("2**(-2)"), Expr::constant(Rational(1, 4)));
  EXPECT_EQ(P("9223372036854775807"), Expr::constant(std::numeric_limits<int64_t>::max()));
  EXPECT_EQ(P("--x"), S("x"));
}

TEST(ExprParseTest, ErrorsAreHelpful) {
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { P("(Batch/dp"); }), "unbalanced parentheses");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { P("Batch/dp)"); }), "unbalanced parentheses");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { P("Batch +"); }), "trailing operator");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { P("Batch *"); }), "end of input");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { P("x/(a+b)"); }), "division by a sum");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { P("Batch $ dp"); }), "unexpected character '$'");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { P("x & y"); }), "position 2");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { P(""); }), "empty expression");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { P("5.0"); }), "integer literals");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { P("2x"); }), "missing '*'");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { P("x**y"); }), "integer literal");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { P("(a+b)**-1"); }), "negative power of a sum");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { P("x/0"); }), "division by zero");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { P("99999999999999999999"); }), "too large");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { P("()"); }), "empty parentheses");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { P("x */ y"); }), "unexpected operator '/'");
  // Every parse error names the offending text.
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { P("(Seq/cp"); }), "'(Seq/cp'");
}

// ------------------------------------------------------------------ Algebra

TEST(ExprAlgebraTest, Canonicalisation) {
  EXPECT_EQ(P("Batch/dp*dp"), P("Batch"));
  EXPECT_EQ(P("(Seq/cp)/tp"), P("Seq/(cp*tp)"));
  EXPECT_EQ(P("a*b"), P("b*a"));
  EXPECT_EQ(P("x + y - x"), P("y"));
  EXPECT_TRUE(P("x - x").is_zero());
  EXPECT_TRUE(P("x - x").terms().empty());
  EXPECT_EQ(P("x/x"), Expr::constant(1));
  // Monomials never store zero exponents.
  const Expr e = P("x*y/y");
  ASSERT_EQ(e.terms().size(), 1u);
  EXPECT_EQ(e.terms().begin()->first, (Expr::Monomial{{"x", 1}}));
}

TEST(ExprAlgebraTest, MultiplyAndDivide) {
  const Expr batch = S("Batch"), dp = S("dp"), tp = S("tp");
  EXPECT_EQ((batch / dp).str(), "Batch/dp");
  EXPECT_EQ((batch / dp * dp), batch);
  EXPECT_EQ((batch / (Expr::constant(2) * dp)).str(), "Batch/(2*dp)");
  EXPECT_EQ((S("x") + S("y")) * (S("x") - S("y")), P("x**2 - y**2"));
  EXPECT_EQ((P("2*x + 4*y") / P("2*tp")).str(), "2*y/tp + x/tp");
  EXPECT_EQ(product({batch, S("Seq"), Expr::constant(1) / tp}).str(), "Batch*Seq/tp");
  EXPECT_EQ(product({}), Expr::constant(1));
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([&] { return batch / (dp + tp); }),
                      "division by a sum");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([&] { return batch / Expr(); }), "division by zero");
}

TEST(ExprAlgebraTest, Sums) {
  const Expr dff = S("Dff"), dmodel = S("Dmodel"), tp = S("tp");
  const Expr two = Expr::constant(2), four = Expr::constant(4);
  const Expr e = two * dff * dmodel / tp + four * dmodel.pow(2) / tp;
  EXPECT_EQ(e.str(), "2*Dff*Dmodel/tp + 4*Dmodel**2/tp");
  EXPECT_EQ(e, P("2*Dff*Dmodel/tp + 4*Dmodel**2/tp"));
  EXPECT_EQ(e.terms().size(), 2u);
  EXPECT_EQ(e + e, P("4*Dff*Dmodel/tp + 8*Dmodel**2/tp"));
  EXPECT_EQ(e - e, Expr());
}

TEST(ExprAlgebraTest, Pow) {
  EXPECT_EQ(S("x").pow(0), Expr::constant(1));
  EXPECT_EQ(P("2*x/y").pow(-2), P("y**2/(4*x**2)"));
  EXPECT_EQ(P("x + 1").pow(3), P("x**3 + 3*x**2 + 3*x + 1"));
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { return P("x + 1").pow(-1); }),
                      "negative power of a sum");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] { return Expr().pow(-1); }), "division by zero");
}

TEST(ExprAlgebraTest, Predicates) {
  EXPECT_TRUE(Expr().is_constant());
  EXPECT_TRUE(P("7/2").is_constant());
  EXPECT_FALSE(P("x").is_constant());
  EXPECT_TRUE(P("Batch/dp").has_symbol("dp"));
  EXPECT_FALSE(P("Batch/dp").has_symbol("tp"));
  EXPECT_FALSE(P("dp/dp").has_symbol("dp"));
  EXPECT_LT(P("x"), P("y")) << "operator< is a strict total order usable in std::map";
}

TEST(ExprAlgebraTest, FreeSymbols) {
  EXPECT_EQ(P("2*Dff*Dmodel/tp + 4*Dmodel**2/tp").free_symbols(),
            (std::set<std::string>{"Dff", "Dmodel", "tp"}));
  EXPECT_TRUE(P("3/2").free_symbols().empty());
  EXPECT_TRUE(P("x - x").free_symbols().empty());
}

// ------------------------------------------------------------- Substitution

TEST(ExprSubstituteTest, ByNumberSymbolAndExpression) {
  const Expr e = P("Seq/(cp*tp)");
  EXPECT_EQ(e.substitute("cp", Expr::constant(1)), P("Seq/tp"));
  EXPECT_EQ(e.substitute("cp", Expr::constant(2)).str(), "Seq/(2*tp)");
  EXPECT_EQ(e.substitute("cp", S("tp")).str(), "Seq/tp**2");
  EXPECT_EQ(e.substitute("Seq", P("a + b")).str(), "a/(cp*tp) + b/(cp*tp)");
  EXPECT_EQ(e.substitute("tp", P("2*x/y")), P("Seq*y/(2*cp*x)"));
  EXPECT_EQ(e.substitute("absent", S("z")), e);
  EXPECT_EQ(P("x**2 + x").substitute("x", P("y + 1")), P("y**2 + 3*y + 2"));
  EXPECT_EQ(P("Batch/dp*x").substitute("x", S("dp")), S("Batch"));
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([&] { return e.substitute("tp", P("a + b")); }),
                      "negative power of a sum");
}

TEST(ExprSubstituteTest, MapIsSimultaneous) {
  const Expr e = P("a/b");
  EXPECT_EQ(e.substitute(std::map<std::string, Expr>{{"a", S("b")}, {"b", S("a")}}), P("b/a"));
  EXPECT_EQ(
      e.substitute(std::map<std::string, Expr>{{"a", Expr::constant(6)}, {"b", Expr::constant(4)}}),
      Expr::constant(Rational(3, 2)));
}

// --------------------------------------------------------------- Evaluation

TEST(ExprEvaluateTest, Exact) {
  const std::map<std::string, int64_t> v = {{"Batch", 8}, {"dp", 2},  {"Seq", 4096}, {"cp", 2},
                                            {"tp", 4},    {"Dff", 3}, {"Dmodel", 5}};
  EXPECT_EQ(P("Batch/dp").evaluate(v), Rational(4));
  EXPECT_EQ(P("Seq/(cp*tp)").evaluate(v), Rational(512));
  EXPECT_EQ(P("2*Dff*Dmodel/tp + 4*Dmodel**2/tp").evaluate(v), Rational(65, 2));
  const Rational r = P("(Dmodel + 2)/dp").evaluate(v);
  EXPECT_EQ(r, Rational(7, 2));
  EXPECT_FALSE(r.is_integer());
  EXPECT_EQ(r.num(), 7);
  EXPECT_EQ(r.den(), 2);
  EXPECT_EQ(Expr().evaluate({}), Rational(0));
  EXPECT_EQ(P("-3/4").evaluate({}), Rational(-3, 4));
}

TEST(ExprEvaluateTest, UnboundSymbolNamed) {
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] {
                        return P("Batch/dp").evaluate({{"Batch", 8}});
                      }),
                      "unbound symbol 'dp'");
}

TEST(ExprEvaluateTest, ZeroInDenominatorThrows) {
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([] {
                        return P("Batch/dp").evaluate({{"Batch", 8}, {"dp", 0}});
                      }),
                      "division by zero");
  EXPECT_EQ(P("Batch*dp").evaluate({{"Batch", 8}, {"dp", 0}}), Rational(0));
}

TEST(ExprEvaluateTest, OverflowThrows) {
  const int64_t big = int64_t{1} << 40;
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([&] {
                        return P("x*y").evaluate({{"x", big}, {"y", big}});
                      }),
                      "integer overflow");
  EXPECT_PRED_FORMAT2(ErrorContains, error_of([&] {
                        return P("x**2").evaluate({{"x", big}});
                      }),
                      "integer overflow");
  EXPECT_PRED_FORMAT2(
      ErrorContains, error_of([] {
        return P("x + y").evaluate({{"x", std::numeric_limits<int64_t>::max()}, {"y", 1}});
      }),
      "integer overflow");
  // Within range, large values are fine.
  EXPECT_EQ(P("x*y/y").evaluate({{"x", big}, {"y", big}}), Rational(big));
  EXPECT_EQ(P("x*y").evaluate({{"x", int64_t{1} << 31}, {"y", int64_t{1} << 31}}),
            Rational(int64_t{1} << 62));
}

}  // namespace
}  // namespace stg::expr

// Found by fuzzing: a product of many sums expands exponentially; it is
// refused with an ExprError instead of running for minutes.
TEST(ExprLimitsTest, ExplodingProductIsRefused) {
  std::string text;
  for (int i = 0; i < 16; ++i) text += std::string(i ? "*" : "") + "(a" + std::to_string(i) + "+b+c)";
  EXPECT_THROW(stg::expr::Expr::parse(text), stg::expr::ExprError);
  EXPECT_NO_THROW(stg::expr::Expr::parse("(a+b)*(c+d)*(e+f)"));
}
