// While a run is generated, SIGINT, SIGTERM and SIGHUP only ask it to stop
// (the library then removes its staging directory and throws
// io::Interrupted), and SIGXFSZ is ignored, so that a file-size limit is a
// write error (EFBIG) rather than a kill. A signal the shell made us ignore
// (nohup, background jobs) stays ignored. The handlers go when the run ends.
#pragma once

#include <csignal>
#include <cstddef>

namespace cli {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
  static constexpr size_t kCount = sizeof(kSignals) / sizeof(kSignals[0]);
  struct sigaction old_[kCount] = {};
};

}  // namespace cli
