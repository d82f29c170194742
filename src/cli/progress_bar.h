// The command line's progress display: one line on stderr, shown only when
// stderr is a terminal and the run has lasted about a second; it names the
// phase the library reports (building, passes, lowering, writing) and,
// where the phase has a count, a bar; "stopping" once a stop signal came.
// Cleared when the run ends.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "stg/generate.h"

namespace cli {

class ProgressBar : public stg::ProgressListener {
 public:
  ProgressBar();
  ~ProgressBar() override;  // stops drawing and clears the line

  void phase(std::string_view name, int64_t total, std::string_view unit) override;
  void advance(int64_t units, int64_t bytes) override {
    done_ += units;
    bytes_ += bytes;
  }

 private:
  void run();
  void draw(double seconds);

  std::mutex mutex_;  // guards the phase fields, stop_
  std::string phase_, unit_;
  int64_t total_ = 0;
  std::atomic<int64_t> done_{0}, bytes_{0};
  std::condition_variable wake_;
  bool stop_ = false;
  bool drawn_ = false;
  bool stopping_shown_ = false;
  std::thread thread_;
};

}  // namespace cli
