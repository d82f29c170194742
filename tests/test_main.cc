// main() of stg_tests: GoogleTest's flags, then our own.
//   --update_golden   rewrite tests/data/golden/*.json (see tests/e2e_test.cc)
// Any other argument left over after GoogleTest's is refused (exit status 2).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "test_flags.h"

namespace stg_test {
namespace {
bool g_update_golden = false;
}  // namespace

bool update_golden() { return g_update_golden; }

}  // namespace stg_test

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--update_golden") == 0) {
      stg_test::g_update_golden = true;
    } else {
      std::fprintf(stderr, "%s: unknown argument '%s' (own flags: --update_golden)\n", argv[0],
                   argv[i]);
      return 2;
    }
  }
  return RUN_ALL_TESTS();
}
