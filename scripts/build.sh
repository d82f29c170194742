#!/usr/bin/env bash
# Configures and builds stg (Release) into build/ at the repository root,
# whatever the caller's current directory.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
