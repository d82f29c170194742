#include "stg/io/cancel.h"

#include <csignal>

namespace stg::io {

std::string signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGXFSZ:
      return "SIGXFSZ";
    default:
      return "signal " + std::to_string(signal);
  }
}

Interrupted::Interrupted(int signal)
    : OutputError("interrupted by " + signal_name(signal)), signal_(signal) {}

}  // namespace stg::io
