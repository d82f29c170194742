#!/usr/bin/env bash
# Builds stg and stg_tests with AddressSanitizer + UBSan (-DSTG_SANITIZE=ON,
# RelWithDebInfo) into build-asan/ and runs the test suite there. Any
# sanitizer report fails the run: leaks are detected, UBSan halts on the
# first error and prints a stack trace.
#
# To fit CI on two cores the build is -O1 -g1 (line tables only) instead of
# RelWithDebInfo's -O2 -g (about twice as fast to build; reports keep file:line
# stacks); pass --flags "-O2 -g" for the slow build. The ~400
# configuration-matrix tests (tests/matrix_test.cc) run in one stg_tests
# process per core (gtest sharding) instead of one process each (ASan
# start-up dominates them); every other test runs under ctest. With extra
# ctest arguments only ctest runs.
#   usage: bash scripts/sanitize.sh [--flags "<compiler flags>"]
#                                   [extra ctest arguments, e.g. -R Replay]
#   --flags (first argument only) replaces the default "-O1 -g1".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
flags="-O1 -g1"
if [[ "${1:-}" == --flags ]]; then
  if [[ $# -lt 2 ]]; then
    echo "sanitize: --flags needs a value, e.g. --flags \"-O2 -g\"" >&2
    exit 2
  fi
  flags="$2"
  shift 2
fi
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [[ -f build-asan/CMakeCache.txt ]] && ! grep -q "^CMAKE_GENERATOR:INTERNAL=${generator[1]:-Unix Makefiles}$" build-asan/CMakeCache.txt; then
  rm -rf build-asan  # configured with another generator
fi
cmake -S . -B build-asan "${generator[@]}" -DSTG_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags -DNDEBUG"
cmake --build build-asan -j"$(nproc)" --target stg stg_tests
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
ctest --test-dir build-asan --output-on-failure -j"$(nproc)" --timeout 600 \
  -E '^Matrix/MatrixConfig\.' "$@"
if [[ $# -eq 0 ]]; then
  shards=$(nproc)
  echo "sanitize: configuration matrix, $shards shard(s) of one process each"
  pids=()
  for ((i = 0; i < shards; ++i)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i build-asan/stg_tests \
      --gtest_filter='Matrix/MatrixConfig.*' --gtest_brief=1 >"build-asan/matrix.$i.log" 2>&1 &
    pids+=($!)
  done
  status=0
  for ((i = 0; i < shards; ++i)); do
    if ! wait "${pids[$i]}"; then
      status=1
      cat "build-asan/matrix.$i.log"
    fi
    grep -E '^\[( +PASSED| +FAILED|=+\])' "build-asan/matrix.$i.log" || true
  done
  exit "$status"
fi
