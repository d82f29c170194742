#include "stg/io/progress.h"

#include <unistd.h>

#include <cstdio>

namespace stg::io {

Progress::Progress(int64_t total, const char* unit) : total_(total), unit_(unit) {
  if (isatty(STDERR_FILENO)) thread_ = std::thread([this] { run(); });
}

Progress::~Progress() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (drawn_) std::fprintf(stderr, "\r\033[K");
}

void Progress::run() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_; })) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds >= 1.0) draw(seconds);
  }
}

void Progress::draw(double seconds) {
  constexpr int kWidth = 30;
  const int64_t done = done_;
  const double fraction = total_ > 0 ? static_cast<double>(done) / total_ : 1.0;
  char bar[kWidth + 1];
  const int filled = static_cast<int>(fraction * kWidth);
  for (int i = 0; i < kWidth; ++i) bar[i] = i < filled ? '=' : ' ';
  bar[kWidth] = '\0';
  const double mb = static_cast<double>(bytes_) / 1e6;
  std::fprintf(stderr, "\r[%s] %3.0f%% %lld/%lld %s, %.0f MB, %.1f s", bar, fraction * 100,
               static_cast<long long>(done), static_cast<long long>(total_), unit_, mb, seconds);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace stg::io
