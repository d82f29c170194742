// The check of a refused command line: exit status 2, one line on stderr
// that contains `text`, nothing on stdout.
#pragma once

#include <string>

#include "gtest/gtest.h"
#include "run_stg.h"

namespace stg_test {

inline void expect_refused(const RunResult& r, const std::string& text) {
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(text), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace stg_test
