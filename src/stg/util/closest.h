// "Did you mean ...?": the known name nearest to a mistyped one.
#pragma once

#include <string>
#include <vector>

namespace stg::util {

// The name of `known` nearest to `name` by edit distance, ignoring case, if
// it is near enough to be a typo (at most max(3, size/3) edits); "" if none.
// A name that differs only in case is always found.
std::string closest(const std::string& name, const std::vector<std::string>& known);

}  // namespace stg::util
