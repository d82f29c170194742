// The refusal the steps of a run share (generate.h): bad input is a
// UsageError whose message names the flag and the fix.
#pragma once

#include <string>

#include "stg/options.h"

namespace stg {

inline void require(bool ok, const std::string& message) {
  if (!ok) throw UsageError(message);
}

}  // namespace stg
