// Runs a job for every index of a range on a few threads.
#pragma once

#include <cstdint>
#include <functional>

namespace stg::util {

// job(i) for i in [begin, end) on `threads` threads (the caller's included),
// indices handed out in order. The first exception stops the others from
// taking new indices and is rethrown here.
void parallel_for(int64_t begin, int64_t end, int threads, const std::function<void(int64_t)>& job);

}  // namespace stg::util
