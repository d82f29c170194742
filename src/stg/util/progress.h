// Told what a long call (a run, a plan sweep, a validation) is doing, so that
// a caller can show progress; the library itself prints nothing.
#pragma once

#include <cstdint>
#include <string_view>

namespace stg {

// advance() may be called from worker threads.
class ProgressListener {
 public:
  virtual ~ProgressListener() = default;
  // A new phase ("passes", "lowering", "writing", "plans", "reading") of
  // `total` `unit`s (0: no count).
  virtual void phase(std::string_view /*name*/, int64_t /*total*/, std::string_view /*unit*/) {}
  virtual void advance(int64_t /*units*/, int64_t /*bytes*/) {}
};

}  // namespace stg
