// Errors of writing a run's files. The message is one line that names the
// file and the reason; the code that cleans up after the error appends what
// that left behind (": nothing was written to DIR").
#pragma once

#include <stdexcept>
#include <string>

namespace stg::io {

class OutputError : public std::runtime_error {
 public:
  explicit OutputError(const std::string& message)
      : std::runtime_error(message), message_(message) {}
  const char* what() const noexcept override { return message_.c_str(); }
  // Adds to the end of the message (the outcome of the clean-up).
  void append(const std::string& more) { message_ += more; }

 private:
  std::string message_;
};

// The run was asked to stop by a signal (see cancel.h); what(): "interrupted
// by SIGTERM".
class Interrupted : public OutputError {
 public:
  explicit Interrupted(int signal);
  int signal() const { return signal_; }

 private:
  int signal_;
};

}  // namespace stg::io
