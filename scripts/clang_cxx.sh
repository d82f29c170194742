#!/usr/bin/env bash
# Prints the path of a clang++ that links with libFuzzer, ASan and UBSan
# (clang++-14, Debian 12's, or clang++), installing clang-14 and
# libclang-rt-14-dev with apt-get when none does (needs root then).
# Used by fuzz/run.sh (libFuzzer needs clang) and scripts/sanitize.sh.
#   usage: cxx=$(bash scripts/clang_cxx.sh)
set -euo pipefail

# Whether $1 compiles and links a fuzz target under the sanitizers.
can_fuzz() {
  local cxx="$1" dir
  command -v "$cxx" >/dev/null 2>&1 || return 1
  dir=$(mktemp -d)
  printf '#include <cstdint>\n#include <cstddef>\nextern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n' \
    >"$dir/t.cc"
  if "$cxx" -fsanitize=fuzzer,address,undefined "$dir/t.cc" -o "$dir/t" >/dev/null 2>&1; then
    rm -rf "$dir"
    return 0
  fi
  rm -rf "$dir"
  return 1
}

for c in clang++-14 clang++; do
  if can_fuzz "$c"; then
    command -v "$c"
    exit 0
  fi
done
if [[ $(id -u) -ne 0 ]]; then
  echo "clang_cxx: clang with libFuzzer is missing: run as root, or: sudo apt-get install -y clang-14 libclang-rt-14-dev" >&2
  exit 1
fi
echo "clang_cxx: installing clang-14 libclang-rt-14-dev" >&2
export DEBIAN_FRONTEND=noninteractive
# apt's output to stderr: stdout is the compiler's path.
apt-get update >&2
apt-get install -y --no-install-recommends clang-14 libclang-rt-14-dev >&2
can_fuzz clang++-14 || { echo "clang_cxx: clang++-14 still cannot build a fuzzer" >&2; exit 1; }
command -v clang++-14
