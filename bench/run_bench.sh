#!/usr/bin/env bash
# Speed and memory of stg on the configurations the issues name. Builds a
# Release binary, runs each configuration RUNS times (default 3) into a
# scratch directory and prints the median wall time, the median peak RSS,
# output size and throughput. Times are wall-clock on this machine: compare
# ratios measured in one run, not across machines.
# Usage: bench/run_bench.sh [RUNS] [--big]   (--big adds the 32K/64K-rank cases)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
big=${2:-}
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DSTG_BUILD_TESTS=OFF -DSTG_BUILD_BENCH=ON >/dev/null
cmake --build build-bench -j"$(nproc)" --target stg stg_micro_bench >/dev/null
stg=$PWD/build-bench/stg
scratch=$(mktemp -d "${TMPDIR:-/tmp}/stg_bench.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

measure() {  # name, then stg flags
  local name=$1
  shift
  local times=() rss=() bytes=0
  for ((i = 0; i < runs; i++)); do
    rm -rf "$scratch/out"
    local line
    line=$({ /usr/bin/time -f "%e %M" "$stg" --quiet --output_dir "$scratch/out" "$@" >/dev/null; } 2>&1 | tail -1)
    times+=("${line% *}")
    rss+=("${line#* }")
  done
  bytes=$(du -sb "$scratch/out" | cut -f1)
  files=$(find "$scratch/out" -type f | wc -l)
  local t r
  t=$(printf '%s\n' "${times[@]}" | sort -g | sed -n "$(((runs + 1) / 2))p")
  r=$(printf '%s\n' "${rss[@]}" | sort -g | sed -n "$(((runs + 1) / 2))p")
  awk -v n="$name" -v t="$t" -v r="$r" -v b="$bytes" -v f="$files" 'BEGIN {
    printf "%-44s %8.3f s  %7.1f MiB RSS  %6d files  %8.1f MB  %7.1f MB/s\n", n, t, r / 1024, f, b / 1e6, (t > 0 ? b / 1e6 / t : 0) }'
}

echo "stg bench: $(nproc) cores, median of $runs runs, $(date -u +%Y-%m-%dT%H:%MZ)"
measure "seed example dp2 tp2 pp2 (transformer)" --dp 2 --tp 2 --pp 2 --weight_sharded 0
measure "seed README 1: dp8 tp4 pp4 (transformer)" --dp 8 --tp 4 --pp 4
measure "later default gpt dp2 tp2 pp2 (ref 23.5 s)" --model_type gpt --dp 2 --tp 2 --pp 2
measure "  with 8 micro-batches (ref 146 s)" --model_type gpt --dp 2 --tp 2 --pp 2 --micro_batch 8
measure "llama default dp2 tp2 pp2 (ref 27.8 s)" --model_type llama --dp 2 --tp 2 --pp 2 --mixed_precision 1
measure "moe default dp2 tp2 pp2 ep2 (ref 82.7 s)" --model_type moe --dp 2 --tp 2 --pp 2 --ep 2
measure "gpt default dp8 tp4 pp4, 128 ranks (ref 26.45 s)" --model_type gpt --dp 8 --tp 4 --pp 4
if [ "$big" = "--big" ]; then
  measure "gpt 2 layers, 32768 ranks" --model_type gpt --num_stacks 2 --batch 512 --dp 512 --tp 4 --sp 4 --pp 4
  measure "gpt 2 layers, 65536 ranks" --model_type gpt --num_stacks 2 --batch 1024 --dp 1024 --tp 4 --sp 4 --pp 4
fi

echo
echo "micro-benchmarks (Google Benchmark):"
build-bench/stg_micro_bench --benchmark_min_time=0.2 2>/dev/null | grep -E '^(BM_|Benchmark)'
