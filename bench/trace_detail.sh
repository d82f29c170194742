#!/usr/bin/env bash
# Size and speed of --trace_detail full vs sim on GPT-3 175B as trained
# (tp 8, pp 16, dp 12: 1536 ranks, 128 micro-batches, 1f1b, physical units).
#
# A whole run writes about 15 GB with full detail, so by default only ranks
# 0-95 are written: that is all 96 ranks of pipeline stage 0 (ranks are
# numbered with the stage outermost, 96 ranks per stage), about 1 GB in full
# detail. Stage 0 carries the embedding and 6 of the 96 blocks, like every
# other stage plus or minus the embedding/loss; its bytes per node are
# representative. --full-run writes all 1536 ranks instead (needs ~19 GB of
# free space in the scratch directory, one level at a time).
#
# For each level it prints the median wall time and CPU time (user + sys) of
# RUNS runs, the median peak RSS (all three from /usr/bin/time -v), bytes
# written (trace files and the comm-group file, as stg reports them), nodes,
# bytes per node and MB/s (bytes / median wall time: the whole run, model
# building, passes and lowering included; these take ~4-5 s here whatever
# the level, so the writing phase alone is faster than MB/s says, and more
# so with --full-run). Runs are interleaved (full, sim, full, sim, ...) so
# that load from other processes spreads evenly over both levels.
#
# Usage: bench/trace_detail.sh [RUNS] [--full-run] [--stg PATH] [--scratch DIR]
#   RUNS       runs per measurement (default 3; the median is printed)
#   --stg      the stg binary (default build/stg)
#   --scratch  where the outputs go (default: a fresh directory in $TMPDIR or /tmp)
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
full_run=0
bench_extra_arg() {
  [ "$1" = --full-run ] || return 1
  full_run=1
}
source bench/common.sh
bench_init trace_detail.sh "$@"

config=(--model gpt3-175b --tp 8 --pp 16 --dp 12 --batch 1536 --micro_batch 12
  --pipeline_schedule 1f1b --units physical --dtype bf16)
if [ "$full_run" = 1 ]; then
  ranks=()
  what="all 1536 ranks"
else
  ranks=(--ranks 0-95)
  what="ranks 0-95 (pipeline stage 0 of 16)"
fi

# run_once KEY LEVEL FLAGS...: one run; appends its wall time, CPU time
# (user + sys) and peak RSS to KEY's lists and records bytes and nodes from
# stg's summary line.
declare -A walls cpus rsss bytes nodes
run_once() {
  local key=$1 level=$2
  shift 2
  local summary
  summary=$(time_run "$scratch/out" "${config[@]}" --trace_detail "$level" "$@")
  rm -rf "$scratch/out"
  walls[$key]+="$(wall_seconds) "
  cpus[$key]+="$(cpu_seconds) "
  rsss[$key]+="$(peak_rss_kb) "
  # "stg: 1536 ranks, 97 files, 911301867 bytes, 3012096 nodes in 8.123 s -> DIR"
  bytes[$key]=$(sed -n 's/.* files, \([0-9]*\) bytes, .*/\1/p' <<<"$summary")
  nodes[$key]=$(sed -n 's/.* bytes, \([0-9]*\) nodes in .*/\1/p' <<<"$summary")
  if [ -z "${bytes[$key]}" ] || [ -z "${nodes[$key]}" ]; then
    echo "trace_detail.sh: cannot read stg's summary line: '$summary'" >&2
    exit 1
  fi
}
med() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | median; }

echo "stg --trace_detail bench: GPT-3 175B tp8 pp16 dp12, 128 micro-batches, 1f1b, physical units"
echo "writing $what; $(nproc) cores; median of $runs run(s); $(date -u +%Y-%m-%dT%H:%MZ)"
echo "stg: $stg"

# Interleaved so that each level's runs see the same load on a shared machine.
for ((i = 0; i < runs; i++)); do
  run_once full full "${ranks[@]}"
  run_once sim sim "${ranks[@]}"
done
printf '%-6s %8s %8s %10s %13s %9s %7s %8s\n' level "wall s" "CPU s" "peak RSS" bytes nodes \
  "B/node" "MB/s"
for level in full sim; do
  awk -v l="$level" -v w="$(med "${walls[$level]}")" -v c="$(med "${cpus[$level]}")" \
    -v r="$(med "${rsss[$level]}")" -v b="${bytes[$level]}" -v n="${nodes[$level]}" 'BEGIN {
    printf "%-6s %8.2f %8.2f %6.0f MiB %13.0f %9.0f %7.1f %8.1f\n", l, w, c, r / 1024, b, n, b / n,
           (w > 0 ? b / 1e6 / w : 0)
  }'
done
