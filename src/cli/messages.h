// The lines the generator's command line prints on stderr, in one form.
#pragma once

#include <cstdio>
#include <string>

namespace cli {

// "stg: error: MESSAGE".
inline void print_error(const std::string& message) {
  std::fprintf(stderr, "stg: error: %s\n", message.c_str());
}

// A usage error: the message, and exit status 2.
inline int fail(const std::string& message) {
  print_error(message);
  return 2;
}

// "stg: note: MESSAGE": something the run chose for the user.
inline void note(const std::string& message) {
  std::fprintf(stderr, "stg: note: %s\n", message.c_str());
}

}  // namespace cli
