// Choice values (--model_type GPT, --units Physical, --model Llama3-8B) are
// matched ignoring ASCII case.
#pragma once

#include <cctype>
#include <string_view>

namespace stg::util {

inline bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

}  // namespace stg::util
