#include "progress_bar.h"

#include <unistd.h>

#include <cstdio>

#include "stg/io/cancel.h"

namespace cli {

ProgressBar::ProgressBar() {
  if (isatty(STDERR_FILENO)) thread_ = std::thread([this] { run(); });
}

ProgressBar::~ProgressBar() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (drawn_) std::fprintf(stderr, "\r\033[K");
}

void ProgressBar::phase(std::string_view name, int64_t total, std::string_view unit) {
  std::lock_guard lock(mutex_);
  phase_ = name;
  unit_ = unit;
  total_ = total;
  done_ = 0;
}

void ProgressBar::run() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_; })) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // A stop was asked for: say so at once, and stop ticking.
    if (const int sig = stg::io::stop_signal.load(std::memory_order_relaxed)) {
      if (!stopping_shown_) {
        std::fprintf(stderr, "\r\033[Kstopping (%s) ...", stg::io::signal_name(sig).c_str());
        std::fflush(stderr);
        stopping_shown_ = drawn_ = true;
      }
      continue;
    }
    if (seconds >= 1.0) draw(seconds);
  }
}

// Called with mutex_ held.
void ProgressBar::draw(double seconds) {
  constexpr int kWidth = 30;
  if (total_ <= 0) {
    std::fprintf(stderr, "\r\033[K%s ... %.1f s", phase_.c_str(), seconds);
  } else {
    const int64_t done = done_;
    const double fraction = static_cast<double>(done) / static_cast<double>(total_);
    char bar[kWidth + 1];
    const int filled = static_cast<int>(fraction * kWidth);
    for (int i = 0; i < kWidth; ++i) bar[i] = i < filled ? '=' : ' ';
    bar[kWidth] = '\0';
    // Bytes only for phases that write (plans and checks count none).
    char written[32] = "";
    if (bytes_ > 0)
      std::snprintf(written, sizeof written, ", %.0f MB", static_cast<double>(bytes_) / 1e6);
    std::fprintf(stderr, "\r\033[K%s [%s] %3.0f%% %lld/%lld %s%s, %.1f s", phase_.c_str(), bar,
                 fraction * 100, static_cast<long long>(done), static_cast<long long>(total_),
                 unit_.c_str(), written, seconds);
  }
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace cli
