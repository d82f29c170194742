// A total of 64-bit figures over many ranks, kept exactly: a step's FLOPs
// summed over the ranks of a large run pass int64's 9.2e18 (DeepSeek-V3 on
// 2,048 GPUs does: up to 9e15 per rank), so totals are held in 128 bits.
// Written as a JSON integer while it fits int64 (every figure that fitted
// keeps its bytes), as an unsigned one while it fits uint64, else as a
// string of decimal digits; text is its decimal digits.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace stg::report {

class ExactTotal {
 public:
  ExactTotal() = default;
  ExactTotal(int64_t v) : value_(v) {}  // implicit: a total of one figure

  ExactTotal& operator+=(int64_t v) {
    value_ += v;
    return *this;
  }
  ExactTotal& operator+=(const ExactTotal& o) {
    value_ += o.value_;
    return *this;
  }
  bool operator==(const ExactTotal& o) const { return value_ == o.value_; }

  bool fits_int64() const;
  bool fits_uint64() const;
  // The value; std::overflow_error when it does not fit.
  int64_t as_int64() const;
  uint64_t as_uint64() const;
  double as_double() const { return static_cast<double>(value_); }
  std::string text() const;  // decimal digits, '-' first when negative

  // Decimal digits with an optional leading '-'; std::invalid_argument on
  // anything else or a value beyond 128 bits.
  static ExactTotal parse(const std::string& digits);

 private:
  __extension__ using Int128 = __int128;
  Int128 value_ = 0;
};

inline std::ostream& operator<<(std::ostream& os, const ExactTotal& t) { return os << t.text(); }

nlohmann::ordered_json to_json(const ExactTotal& t);
// An integer or a string of digits, as to_json writes; nlohmann's
// type_error or std::invalid_argument on other input.
ExactTotal exact_total_from_json(const nlohmann::ordered_json& j);

}  // namespace stg::report
