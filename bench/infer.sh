#!/usr/bin/env bash
# Memory and time of stg infer in the number of decode steps (issue 21,
# point 3: D = 1,000 decode steps must not cost 1,000x the memory of one):
# Llama-3 70B on 8 GPUs (tp 8), 64 requests, prompts of 2,048 tokens, 1 to
# 1,000 decode steps. Decode steps are written from one (lower/flat_stage.h),
# so peak RSS stays that of one step while the files grow with the steps.
# Per run: stg's own time (its summary line), peak RSS (/usr/bin/time -v),
# nodes and bytes written, and peak RSS over that of one step. Median of
# RUNS. The 1,000-step run writes about 3.5 GB into the scratch directory.
#
# Usage: bench/infer.sh [RUNS] [--stg PATH] [--scratch DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
bench_init infer.sh "$@"

echo "stg infer decode steps: $(nproc) cores, median of $runs run(s), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "stg: $stg"
printf '%6s %8s %10s %10s %14s %8s\n' steps "time s" "peak RSS" nodes bytes "RSS/1"
base_rss=0
for steps in 1 10 100 1000; do
  median_run "$scratch/out" infer --model llama3-70b --tp 8 --requests 64 --prompt_len 2048 \
    --decode_steps "$steps"
  [ "$steps" = 1 ] && base_rss=$rss_kb
  awk -v d="$steps" -v w="$wall" -v r="$rss_kb" -v n="$nodes" -v b="$bytes" -v r1="$base_rss" 'BEGIN {
    printf "%6d %8.3f %7.1f MB %10d %14.0f %8.2f\n", d, w, r / 1000, n, b, r / r1 }'
done
