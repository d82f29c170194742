// Asking a running generate() to stop. The library installs no signal
// handler: the caller stores a signal number into stop_signal (the command
// line does so from its SIGINT, SIGTERM and SIGHUP handlers), and generate()
// reads it between passes and the writer threads between files and between
// chunks of a file. The run then throws Interrupted and removes its staging
// directory, leaving the output directory as it was. Nothing resets the flag.
#pragma once

#include <atomic>
#include <string>

#include "stg/io/error.h"

namespace stg::io {

// The signal that asked the run to stop; 0 while nobody did.
inline std::atomic<int> stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free,
              "stop_signal is stored from signal handlers: it must be lock-free");

// Records `signal` unless a stop was already asked for (the first signal is
// the one reported). Async-signal-safe: a signal handler may call it.
inline void request_stop(int signal) noexcept {
  int none = 0;
  stop_signal.compare_exchange_strong(none, signal, std::memory_order_relaxed);
}

// Throws Interrupted when a stop was asked for.
inline void throw_if_stopped() {
  if (const int signal = stop_signal.load(std::memory_order_relaxed)) throw Interrupted(signal);
}

// "SIGINT", "SIGTERM", "SIGHUP", ... or "signal N".
std::string signal_name(int signal);

}  // namespace stg::io
