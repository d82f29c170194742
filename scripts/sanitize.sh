#!/usr/bin/env bash
# Builds stg and stg_tests with AddressSanitizer + UBSan (-DSTG_SANITIZE=ON)
# into build-asan/ and runs the test suite there. Any sanitizer report fails
# the run: leaks are detected, UBSan halts on the first error and prints a
# stack trace.
#
# To fit CI on two cores:
# - the compiler is clang++ (scripts/clang_cxx.sh, which the fuzz run needs
#   too): at -O0 under the sanitizers it compiles in about 55% of g++'s
#   time (plans_command.cc 10.3 s against 17.8 s, features_test.cc 11.0 s
#   against 21.9 s), and the Release build already tests g++'s code.
# - the build is -O0 -g1 (line tables only): about half the compile time of
#   -O1 and a third of RelWithDebInfo's -O2 -g, and the sanitizers miss
#   nothing at -O0; reports keep file:line stacks. --flags "-O1 -g" for
#   another build.
# - the GoogleTest cases run in one stg_tests process per core (gtest
#   sharding), not one process per case as under ctest: ASan's start-up in
#   each of ~1,100 processes took most of the 12 minutes the suite took.
#   The tests that are scripts (ctest label "script") are left to the
#   Release run; `bash scripts/sanitize.sh -L script` runs them here.
# With extra ctest arguments (e.g. -R Replay) only ctest runs, with them.
#   usage: bash scripts/sanitize.sh [--flags "<compiler flags>"]
#                                   [extra ctest arguments, e.g. -R Replay]
#   --flags (first argument only) replaces the default "-O0 -g1".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
flags="-O0 -g1"
if [[ "${1:-}" == --flags ]]; then
  if [[ $# -lt 2 ]]; then
    echo "sanitize: --flags needs a value, e.g. --flags \"-O1 -g\"" >&2
    exit 2
  fi
  flags="$2"
  shift 2
fi
cxx=$(bash scripts/clang_cxx.sh)
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [[ -f build-asan/CMakeCache.txt ]] &&
  ! { grep -q "^CMAKE_GENERATOR:INTERNAL=${generator[1]:-Unix Makefiles}$" build-asan/CMakeCache.txt &&
    grep -q "^CMAKE_CXX_COMPILER:[A-Z]*=$cxx$" build-asan/CMakeCache.txt; }; then
  rm -rf build-asan  # configured with another generator or compiler
fi
cmake -S . -B build-asan "${generator[@]}" -DCMAKE_CXX_COMPILER="$cxx" -DSTG_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags -DNDEBUG"
cmake --build build-asan -j"$(nproc)" --target stg stg_tests
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
if [[ $# -gt 0 ]]; then
  exec ctest --test-dir build-asan --output-on-failure -j"$(nproc)" --timeout 600 "$@"
fi

# The scripts (the README test, the include layers) are not run here: the
# README test only runs the stg binary on the docs' commands, which the
# GoogleTest cases below also run under the sanitizers (run_stg), and it took
# 3 of CI's 36 minutes at -O0.
# The matrix (tests/matrix_test.cc) runs the same code paths over ~760
# feature combinations, more than half of the suite's time: under the
# sanitizers every 8th of each of its suites (in list order, so every
# section) runs; the Release run (scripts/test.sh) runs them all.
matrix_skipped=$(build-asan/stg_tests --gtest_list_tests | awk '
  /^[^ ]/ { suite = $1; matrix = suite ~ /^Matrix\//; n = 0; next }
  matrix { if (n++ % 8 != 0) printf "%s%s", (out++ ? ":" : ""), suite $1 }')
shards=$(nproc)
echo "sanitize: GoogleTest cases (every 8th of the matrix), $shards shard(s) of one process each"
pids=()
for ((i = 0; i < shards; ++i)); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i build-asan/stg_tests --gtest_brief=1 \
    "--gtest_filter=-$matrix_skipped" >"build-asan/gtest.$i.log" 2>&1 &
  pids+=($!)
done
status=0
for ((i = 0; i < shards; ++i)); do
  if ! wait "${pids[$i]}"; then
    status=1
    cat "build-asan/gtest.$i.log"
  fi
  grep -E '^\[( +PASSED| +FAILED|=+\])' "build-asan/gtest.$i.log" || true
done
exit "$status"
