#!/usr/bin/env bash
# GPT-3 175B and Llama-3 405B as they were trained (issue 12, point 3):
# wall time, CPU time, peak RSS (/usr/bin/time -v), bytes, nodes, bytes per
# node and bytes written per second, median of RUNS runs, for
#   - the whole run with --trace_detail sim, next to the targets
#     (GPT-3: < 10 s and < 300 MB; Llama-3 405B: < 15 s and < 300 MB);
#   - the first pipeline stage's ranks with --trace_detail full and sim
#     (a whole full-detail run writes 15 GB and 31 GB), for the bytes per
#     second of both detail levels.
# Reference-mode traces in physical units, as the issue measured them; last,
# the GPT-3 run under --framework megatron (issue order, no target).
#
# Usage: bench/as_trained.sh [RUNS] [--stg PATH] [--scratch DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
bench_init as_trained.sh "$@"

gpt3=(--model gpt3-175b --tp 8 --pp 16 --dp 12 --batch 1536 --micro_batch 12
  --pipeline_schedule 1f1b --units physical --dtype bf16)
llama405=(--model llama3-405b --tp 8 --pp 16 --dp 128 --seq 8192 --batch 2048 --micro_batch 128
  --pipeline_schedule 1f1b --units physical --dtype bf16)

# measure NAME TARGET_S TARGET_MB FLAGS...: RUNS runs, one line of medians.
measure() {
  local name=$1 target_s=$2 target_mb=$3
  shift 3
  local walls=() cpus=() rsss=() summary b n
  for ((i = 0; i < runs; i++)); do
    summary=$(time_run "$scratch/out" "$@")
    rm -rf "$scratch/out"
    walls+=("$(wall_seconds)")
    cpus+=("$(cpu_seconds)")
    rsss+=("$(peak_rss_kb)")
  done
  b=$(sed -n 's/.* files, \([0-9]*\) bytes, .*/\1/p' <<<"$summary")
  n=$(sed -n 's/.* bytes, \([0-9]*\) nodes in .*/\1/p' <<<"$summary")
  awk -v name="$name" -v w="$(printf '%s\n' "${walls[@]}" | median)" \
    -v c="$(printf '%s\n' "${cpus[@]}" | median)" -v r="$(printf '%s\n' "${rsss[@]}" | median)" \
    -v b="$b" -v n="$n" -v ts="$target_s" -v tm="$target_mb" 'BEGIN {
    verdict = ""
    if (ts > 0) verdict = sprintf("  target < %g s, < %g MB: %s", ts, tm,
                                  (w < ts && r / 1000 < tm) ? "met" : "missed")
    printf "%-34s %7.2f %7.2f %7.0f MB %14.0f %10.0f %6.1f %8.1f%s\n", name, w, c, r / 1000, b, n,
           b / n, b / 1e6 / w, verdict }'
}

echo "stg as trained: $(nproc) cores, median of $runs run(s), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "stg: $stg"
printf '%-34s %7s %7s %10s %14s %10s %6s %8s\n' run "wall s" "CPU s" "peak RSS" bytes nodes \
  B/node "MB/s"
measure "GPT-3 175B, all 1536 ranks, sim" 10 300 "${gpt3[@]}" --trace_detail sim
measure "GPT-3 175B, stage 0 (96), full" 0 0 "${gpt3[@]}" --trace_detail full --ranks 0-95
measure "GPT-3 175B, stage 0 (96), sim" 0 0 "${gpt3[@]}" --trace_detail sim --ranks 0-95
measure "Llama-3 405B, all 16384 ranks, sim" 15 300 "${llama405[@]}" --trace_detail sim
measure "Llama-3 405B, stage 0 (1024), full" 0 0 "${llama405[@]}" --trace_detail full --ranks 0-1023
measure "Llama-3 405B, stage 0 (1024), sim" 0 0 "${llama405[@]}" --trace_detail sim --ranks 0-1023
measure "GPT-3 175B megatron, all, sim" 0 0 "${gpt3[@]}" --framework megatron --trace_detail sim
