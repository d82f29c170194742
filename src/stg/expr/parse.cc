// Recursive-descent parser for shape expressions, with Python precedence:
//   sum     := product (('+' | '-') product)*
//   product := unary (('*' | '/') unary)*
//   unary   := ('-' | '+') unary | power
//   power   := primary ('**' exponent)?       (so -x**2 == -(x**2))
//   primary := integer | identifier | '(' sum ')'
//   exponent:= ['-' | '+'] integer | '(' exponent ')'
#include <cctype>
#include <limits>
#include <string>

#include "stg/expr/expr.h"

namespace stg::expr {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Expr parse() {
    skip_space();
    if (at_end()) fail("empty expression");
    Expr e = sum();
    skip_space();
    if (!at_end()) {
      if (peek() == ')') fail("unbalanced parentheses: unexpected ')'");
      fail("unexpected " + describe_here() + " after a complete expression");
    }
    return e;
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  bool starts_with(std::string_view s) const { return text_.substr(pos_).starts_with(s); }

  void skip_space() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  [[noreturn]] void fail(const std::string& msg) const {
    throw ExprError("cannot parse expression '" + std::string(text_) + "' at position " +
                    std::to_string(pos_) + ": " + msg);
  }

  std::string describe_here() const {
    if (at_end()) return "end of input";
    return "character '" + std::string(1, peek()) + "'";
  }

  Expr sum() {
    Expr e = product();
    for (;;) {
      skip_space();
      const char c = peek();
      if (c != '+' && c != '-') return e;
      ++pos_;
      Expr rhs = product();
      e = c == '+' ? e + rhs : e - rhs;
    }
  }

  Expr product() {
    Expr e = unary();
    for (;;) {
      skip_space();
      const char c = peek();
      if (c == '*' && !starts_with("**")) {
        ++pos_;
        e = e * unary();
      } else if (c == '/') {
        const size_t op_pos = pos_++;
        Expr divisor = unary();
        if (divisor.terms().size() > 1) {
          pos_ = op_pos;
          fail("division by a sum (" + divisor.str() +
               ") is not supported; the divisor must be a single term");
        }
        if (divisor.is_zero()) {
          pos_ = op_pos;
          fail("division by zero");
        }
        e = e / divisor;
      } else {
        return e;
      }
    }
  }

  Expr unary() {
    skip_space();
    if (peek() == '-') {
      ++pos_;
      return Expr::constant(-1) * unary();
    }
    if (peek() == '+') {
      ++pos_;
      return unary();
    }
    return power();
  }

  Expr power() {
    Expr base = primary();
    skip_space();
    if (!starts_with("**")) return base;
    pos_ += 2;
    const int exp = exponent();
    if (exp < 0 && base.terms().size() > 1) {
      fail("negative power of a sum (" + base.str() + ") is not supported");
    }
    if (exp < 0 && base.is_zero()) fail("division by zero: 0 raised to a negative power");
    return base.pow(exp);
  }

  int exponent() {
    skip_space();
    if (peek() == '(') {
      ++pos_;
      const int e = exponent();
      skip_space();
      if (peek() != ')') fail("unbalanced parentheses in exponent: expected ')'");
      ++pos_;
      return e;
    }
    bool negative = false;
    if (peek() == '-' || peek() == '+') {
      negative = peek() == '-';
      ++pos_;
      skip_space();
    }
    if (!std::isdigit(static_cast<unsigned char>(peek()))) {
      fail("exponent after '**' must be an integer literal, found " + describe_here());
    }
    const int64_t v = integer();
    if (v > std::numeric_limits<int>::max()) fail("exponent is too large");
    return negative ? -static_cast<int>(v) : static_cast<int>(v);
  }

  // Non-negative int64 literal; rejects decimals such as "5.0".
  int64_t integer() {
    const size_t start = pos_;
    int64_t v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      const int digit = peek() - '0';
      if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        pos_ = start;
        fail("integer literal is too large for 64 bits");
      }
      v = v * 10 + digit;
      ++pos_;
    }
    if (peek() == '.' || peek() == 'e' || peek() == 'E') {
      pos_ = start;
      fail("only integer literals are allowed (write fractions as a/b)");
    }
    if (std::isalpha(static_cast<unsigned char>(peek())) || peek() == '_') {
      fail("missing '*' between number and identifier");
    }
    return v;
  }

  Expr primary() {
    skip_space();
    const char c = peek();
    if (std::isdigit(static_cast<unsigned char>(c))) return Expr::constant(integer());
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t start = pos_;
      while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_') ++pos_;
      return Expr::symbol(std::string(text_.substr(start, pos_ - start)));
    }
    if (c == '(') {
      const size_t open = pos_++;
      skip_space();
      if (peek() == ')') fail("empty parentheses");
      Expr e = sum();
      skip_space();
      if (peek() != ')') {
        if (at_end()) {
          pos_ = open;
          fail("unbalanced parentheses: '(' is never closed");
        }
        fail("expected ')' or an operator, found " + describe_here());
      }
      ++pos_;
      return e;
    }
    if (at_end()) fail("unexpected end of input: expected an operand (trailing operator?)");
    if (c == ')') fail("unbalanced parentheses: unexpected ')'");
    if (c == '*' || c == '/') fail(std::string("unexpected operator '") + c + "'");
    fail("unexpected character '" + std::string(1, c) + "'");
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Expr Expr::parse(std::string_view text) {
  try {
    return Parser(text).parse();
  } catch (const ExprError& e) {
    const std::string what = e.what();
    if (what.starts_with("cannot parse")) throw;
    // Arithmetic errors (overflow) raised while folding; add the context.
    throw ExprError("cannot parse expression '" + std::string(text) + "': " + what);
  }
}

}  // namespace stg::expr
