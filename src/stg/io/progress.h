// A progress bar on stderr for long runs: shown only when stderr is a
// terminal and the run has lasted about a second; cleared when done.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace stg::io {

class Progress {
 public:
  Progress(int64_t total, const char* unit);
  ~Progress();  // stops the bar and clears its line

  void advance(int64_t done_units, int64_t bytes) {
    done_ += done_units;
    bytes_ += bytes;
  }

 private:
  void run();
  void draw(double seconds);

  const int64_t total_;
  const char* unit_;
  std::atomic<int64_t> done_{0}, bytes_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool drawn_ = false;
  std::thread thread_;
};

}  // namespace stg::io
