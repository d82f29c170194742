// Command-line flags of the stg_tests binary (parsed in tests/test_main.cc,
// after GoogleTest has taken its own --gtest_* flags).
#pragma once

namespace stg_test {

// --update_golden: the end-to-end golden tests rewrite
// tests/data/golden/*.json from the current binary instead of comparing.
bool update_golden();

}  // namespace stg_test
