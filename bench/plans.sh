#!/usr/bin/env bash
# Speed of `stg plans` on the issue's case: every plan of Llama 3 405B
# (126 blocks, seq 8192) on 16,384 GPUs with a batch of 2048 sequences
# (Llama 3's 16M tokens), on two threads, output to /dev/null.
#
# Two cases: the plans in enumeration order (no --sort given: sorted by
# memory) and `--sort time` (the predicted step time). For each, prints the
# plan count line of the last run, then the median wall time, CPU time
# (user + sys) and peak RSS of RUNS runs (/usr/bin/time -v). The machine's
# load shows in wall time only: compare CPU time across machines.
#
# Usage: bench/plans.sh [RUNS] [--stg PATH] [--scratch DIR]
#   RUNS       runs (default 5; the median is printed)
#   --stg      the stg binary (default build/stg)
#   --scratch  where /usr/bin/time's figures go (default: a fresh directory in $TMPDIR or /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=5
source bench/common.sh
bench_init plans.sh "$@"

# One case: RUNS runs of stg plans with the issue's flags and "$@".
measure() {
  local name=$1
  shift
  local walls=() cpus=() rss=()
  for ((i = 0; i < runs; ++i)); do
    /usr/bin/time -v -o "$scratch/time.txt" "$stg" plans --model llama3-405b --gpus 16384 \
      --batch 2048 --threads 2 "$@" >"$scratch/out.txt"
    walls+=("$(wall_seconds)") cpus+=("$(cpu_seconds)") rss+=("$(peak_rss_kb)")
  done
  tail -1 "$scratch/out.txt"
  printf 'plans.sh %s: %d runs: median wall %s s, median CPU %s s, median peak RSS %s MB\n' \
    "$name" "$runs" "$(printf '%s\n' "${walls[@]}" | median)" \
    "$(printf '%s\n' "${cpus[@]}" | median)" \
    "$(printf '%s\n' "${rss[@]}" | median | awk '{ printf "%.0f", $1 / 1024 }')"
}

measure "no sort"
# A binary from before the step time has no --sort time.
if [[ $("$stg" plans --help 2>&1) == *time_s* ]]; then
  measure "--sort time" --sort time
fi
