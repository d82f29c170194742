#!/usr/bin/env bash
# Configures stg (Release) into build/ at the repository root, whatever the
# caller's current directory, and builds the given targets: by default only
# the `stg` binary (what the README's example needs); `all` also builds the
# test suite (scripts/test.sh does).
#   usage: bash scripts/build.sh [TARGET ...]     e.g. all, stg, stg_tests
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(stg)
# A first build says how long it takes (the README's figure, measured on two
# idle cores); later builds only recompile what changed.
if [[ ! -x build/stg && " ${targets[*]} " == *" stg "* ]]; then
  echo "build.sh: building stg, about 6 minutes on two idle cores (a first build)"
elif [[ ! -x build/stg_tests && " ${targets[*]} " == *" all "* ]]; then
  echo "build.sh: building stg and its test suite (a first build; the tests are most of it)"
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)" --target "${targets[@]}"
