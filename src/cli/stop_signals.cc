#include "stop_signals.h"

#include "stg/io/cancel.h"

namespace {

extern "C" void on_stop_signal(int signal) { stg::io::request_stop(signal); }

}  // namespace

namespace cli {

StopSignals::StopSignals() {
  std::signal(SIGXFSZ, SIG_IGN);
  struct sigaction ask = {};
  ask.sa_handler = on_stop_signal;
  sigemptyset(&ask.sa_mask);
  ask.sa_flags = SA_RESTART;
  for (size_t i = 0; i < kCount; ++i) {
    sigaction(kSignals[i], nullptr, &old_[i]);
    if (old_[i].sa_handler != SIG_IGN) sigaction(kSignals[i], &ask, nullptr);
  }
}

StopSignals::~StopSignals() {
  for (size_t i = 0; i < kCount; ++i) sigaction(kSignals[i], &old_[i], nullptr);
}

}  // namespace cli
