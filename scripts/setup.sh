#!/usr/bin/env bash
# Installs the Debian 12 packages stg needs to build and test. Idempotent:
# when everything is already installed it touches nothing and returns fast.
set -euo pipefail

PACKAGES=(
  build-essential g++ cmake make
  libprotobuf-dev protobuf-compiler
  nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libjemalloc-dev
  openmpi-bin
  graphviz
  python3 python3-dev python3-venv pybind11-dev python3-matplotlib
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all packages present"
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "setup: missing packages: ${missing[*]}" >&2
  echo "setup: run as root, or: sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"
