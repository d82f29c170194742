#!/usr/bin/env bash
# Side by side with the Python reference generator on the same machine, in
# one run: wall time of each and the ratio. The reference is not part of this
# repository: pass the path of a checkout of astra-sim/symbolic_tensor_graph
# (run with Debian's python3-sympy, -numpy, -pandas, -protobuf, -tqdm).
# Usage: bench/vs_reference.sh REFERENCE_CHECKOUT
set -euo pipefail
if [[ $# -lt 1 || ! -f "$1/main.py" ]]; then
  echo "usage: bench/vs_reference.sh REFERENCE_CHECKOUT (a directory with the reference's main.py)" >&2
  exit 2
fi
ref=$(cd "$1" && pwd)
# The reference's imports, and the Debian package of each.
for module in sympy numpy pandas google.protobuf tqdm; do
  if ! /usr/bin/python3 -c "import $module" 2>/dev/null; then
    package=python3-${module#google.}
    echo "vs_reference.sh: the reference needs the Python module '$module': apt-get install -y $package" >&2
    exit 2
  fi
done
cd "$(dirname "$0")/.."
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DSTG_BUILD_TESTS=OFF >/dev/null
cmake --build build-bench -j"$(nproc)" --target stg >/dev/null
stg=$PWD/build-bench/stg
scratch=$(mktemp -d "${TMPDIR:-/tmp}/stg_vs.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

wall() { /usr/bin/time -f "%e" "$@" 2>&1 >/dev/null | tail -1; }

compare() {  # name, flags shared by both
  local name=$1
  shift
  local t_ref t_stg
  t_ref=$(cd "$ref" && wall /usr/bin/python3 main.py --output_dir "$scratch/ref" --output_name workload.%d.et "$@")
  t_stg=$(wall "$stg" --quiet --output_dir "$scratch/stg" --output_name workload.%d.et "$@")
  awk -v n="$name" -v a="$t_ref" -v b="$t_stg" \
    'BEGIN { printf "%-40s reference %8.2f s   stg %7.3f s   %8.0fx\n", n, a, b, (b > 0 ? a / b : 0) }'
  rm -rf "$scratch/ref" "$scratch/stg"
}

compare "gpt small dp2 tp2 pp2" --model_type gpt --dp 2 --tp 2 --pp 2 --num_stacks 2 \
  --dmodel 1024 --dff 4096 --head 16 --kvhead 4 --seq 512 --batch 8 --dvocal 32000
compare "gpt default dp2 tp2 pp2" --model_type gpt --dp 2 --tp 2 --pp 2
compare "gpt default dp8 tp4 pp4 (128 ranks)" --model_type gpt --dp 8 --tp 4 --pp 4
