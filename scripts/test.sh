#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite.
# Exits non-zero if any step or any test fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
bash scripts/build.sh all
ctest --test-dir build --output-on-failure -j"$(nproc)"
echo "test.sh: all $(ctest --test-dir build -N | sed -n 's/^Total Tests: //p') tests passed"
