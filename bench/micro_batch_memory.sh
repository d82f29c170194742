#!/usr/bin/env bash
# Memory and time in the number of micro-batches (issue 12, point 1): gpt,
# 4 blocks, pp 2, micro-batches 8 .. 2048, without a pipeline schedule and
# with 1F1B. Per run: stg's own time (its summary line, in ms), peak RSS
# (/usr/bin/time -v), nodes, bytes, microseconds per micro-batch added since
# 8 micro-batches ((time - time at 8) / (mbs - 8): constant when time is
# linear in micro-batches) and peak RSS over that of 8 micro-batches (the
# target: within 1.2x at 2048). Median of RUNS.
#
# Usage: bench/micro_batch_memory.sh [RUNS] [--stg PATH] [--scratch DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
bench_init micro_batch_memory.sh "$@"

echo "stg micro-batch memory: $(nproc) cores, median of $runs run(s), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "stg: $stg"
printf '%-10s %6s %8s %10s %10s %12s %10s %8s\n' schedule mbs "time s" "peak RSS" nodes bytes \
  "us/+mb" "RSS/8"
for schedule in none 1f1b; do
  base_rss=0 base_wall=0
  for mbs in 8 32 128 512 2048; do
    median_run "$scratch/out" --model_type gpt --num_stacks 4 --pp 2 --batch "$mbs" \
      --micro_batch 1 --pipeline_schedule "$schedule"
    [ "$mbs" = 8 ] && base_rss=$rss_kb && base_wall=$wall
    awk -v s="$schedule" -v m="$mbs" -v w="$wall" -v r="$rss_kb" -v n="$nodes" -v b="$bytes" \
      -v r8="$base_rss" -v w8="$base_wall" 'BEGIN {
      added = m > 8 ? sprintf("%10.1f", (w - w8) * 1e6 / (m - 8)) : sprintf("%10s", "-")
      printf "%-10s %6d %8.3f %7.1f MB %10d %12d %s %8.2f\n", s, m, w, r / 1000, n, b, added,
             r / r8 }'
  done
done
