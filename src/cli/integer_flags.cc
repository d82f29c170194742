#include "integer_flags.h"

#include <charconv>

namespace cli {

std::string IntegerFlags::check() const {
  for (const Entry& e : entries_) {
    if (e.option->count() == 0) continue;
    const std::string text = e.option->results().back();
    const std::string name = e.option->get_name();
    int64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [stop, error] = std::from_chars(text.data(), end, value);
    if (text.empty() || stop != end || error == std::errc::invalid_argument)
      return name + " " + text + " is not a whole number: use " + e.valid;
    // Out of int64_t's range: a sign says which end; otherwise the value does.
    const bool small = error == std::errc::result_out_of_range ? text[0] == '-' : value < e.min;
    if (error == std::errc::result_out_of_range || value > e.max || value < e.min)
      return name + " " + text + " is too " + (small ? "small" : "large") + ": use " + e.valid;
  }
  return "";
}

}  // namespace cli
