// Right-aligned columns of the command line's tables (the step summary, the
// time breakdown).
#pragma once

#include <cstddef>
#include <string>

namespace cli {

// `s` with spaces before it up to `width` characters (as it is when longer).
inline std::string padded(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

}  // namespace cli
