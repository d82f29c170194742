#include "stg/util/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace stg::util {

void parallel_for(int64_t begin, int64_t end, int threads,
                  const std::function<void(int64_t)>& job) {
  std::atomic<int64_t> next{begin};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (;;) {
      const int64_t i = next.fetch_add(1);
      if (i >= end || failed) return;
      try {
        job(i);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  // No more threads than jobs; a thread the system cannot start leaves the
  // work to the others (a joinable thread destroyed would terminate).
  const int64_t n = std::clamp<int64_t>(end - begin, 1, std::max(1, threads));
  try {
    for (int64_t t = 1; t < n; ++t) pool.emplace_back(worker);
  } catch (const std::system_error&) {
  }
  worker();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace stg::util
