// Integer flags, checked in one place: the text given must be a whole
// number that fits the flag (CLI11 would saturate 99999999999999999999 to
// 2^63-1 silently, or fail in its own words). Lower bounds (a degree >= 1)
// are the library's checks; the upper bound is where a value stops making
// sense (ranks are 32-bit in Chakra traces, threads are a few per core).
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace cli {

// The integer a flag's field holds (int64_t for std::optional<int64_t>).
template <class T>
struct IntegerOf {
  using type = T;
};
template <class T>
struct IntegerOf<std::optional<T>> {
  using type = T;
};

class IntegerFlags {
 public:
  // Adds `names` bound to `target`; its values must be whole numbers from
  // the type's least value up to `max`; `valid` says what is valid
  // ("an integer >= 1"), for the messages.
  // `min`, when given, is a lower bound checked here too (a count that
  // cannot be negative).
  template <class T>
  CLI::Option* add(CLI::App& app, const std::string& names, T& target, const std::string& help,
                   int64_t max, std::string valid, std::optional<int64_t> min = std::nullopt) {
    using Integer = typename IntegerOf<T>::type;
    CLI::Option* option = app.add_option(names, target, help);
    const int64_t least = static_cast<int64_t>(std::numeric_limits<Integer>::min());
    entries_.push_back({option, min ? std::max(*min, least) : least,
                        std::min<int64_t>(max, std::numeric_limits<Integer>::max()),
                        std::move(valid)});
    return option;
  }

  // The first flag given whose last value is not a whole number in its
  // range, as one line in stg's words ("--dp 99999999999999999999 is too
  // large: use an integer from 1 to 2147483647"); "" when every value fits.
  std::string check() const;

 private:
  struct Entry {
    const CLI::Option* option;
    int64_t min, max;
    std::string valid;
  };
  std::vector<Entry> entries_;
};

}  // namespace cli
