#include "stg/report/exact_total.h"

#include <limits>
#include <stdexcept>

namespace stg::report {

bool ExactTotal::fits_int64() const {
  return value_ >= std::numeric_limits<int64_t>::min() &&
         value_ <= std::numeric_limits<int64_t>::max();
}

bool ExactTotal::fits_uint64() const {
  return value_ >= 0 && value_ <= std::numeric_limits<uint64_t>::max();
}

uint64_t ExactTotal::as_uint64() const {
  if (!fits_uint64()) throw std::overflow_error("total " + text() + " does not fit 64 bits");
  return static_cast<uint64_t>(value_);
}

int64_t ExactTotal::as_int64() const {
  if (!fits_int64()) throw std::overflow_error("total " + text() + " does not fit 64 bits");
  return static_cast<int64_t>(value_);
}

std::string ExactTotal::text() const {
  __extension__ using Uint128 = unsigned __int128;
  // The magnitude as unsigned, so that the least value has one too.
  Uint128 v = value_ < 0 ? Uint128(0) - static_cast<Uint128>(value_) : static_cast<Uint128>(value_);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v != 0);
  return value_ < 0 ? "-" + digits : digits;
}

ExactTotal ExactTotal::parse(const std::string& text) {
  __extension__ using Uint128 = unsigned __int128;
  const bool negative = !text.empty() && text[0] == '-';
  const size_t first = negative ? 1 : 0;
  if (text.size() == first) throw std::invalid_argument("'" + text + "' is not a whole number");
  // The largest magnitude: 2^127 - 1, or 2^127 when negative.
  const Uint128 limit = (Uint128(1) << 127) - (negative ? 0 : 1);
  Uint128 v = 0;
  for (size_t i = first; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') throw std::invalid_argument("'" + text + "' is not a whole number");
    const auto digit = static_cast<unsigned>(c - '0');
    if (v > (limit - digit) / 10) throw std::invalid_argument("'" + text + "' exceeds 128 bits");
    v = v * 10 + digit;
  }
  ExactTotal t;
  // Negated from one less, so that -2^127 is not formed from 2^127.
  t.value_ = !negative ? static_cast<Int128>(v) : v == 0 ? 0 : -static_cast<Int128>(v - 1) - 1;
  return t;
}

nlohmann::ordered_json to_json(const ExactTotal& t) {
  if (t.fits_int64()) return t.as_int64();
  if (t.fits_uint64()) return t.as_uint64();
  return t.text();
}

ExactTotal exact_total_from_json(const nlohmann::ordered_json& j) {
  if (j.is_string()) return ExactTotal::parse(j.get<std::string>());
  if (j.is_number_unsigned()) return ExactTotal::parse(std::to_string(j.get<uint64_t>()));
  return ExactTotal(j.get<int64_t>());
}

}  // namespace stg::report
