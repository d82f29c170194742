#!/usr/bin/env bash
# Byte-compares the outputs of two stg binaries over a set of configurations
# (used to prove that an optimisation changes no output byte).
# Usage: bench/compare_outputs.sh OLD_STG NEW_STG
set -euo pipefail
old=$1 new=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
small="--num_stacks 4 --dmodel 256 --dff 1024 --head 8 --seq 128 --batch 16"
configs=(
  "--dp 2 --tp 2 --pp 2 $small --din 1024 --dout 1024"
  "--dp 2 --tp 2 --pp 2 --sp 2 --weight_sharded 1 $small --din 1024 --dout 1024"
  "--dp 2 --tp 2 --pp 2 --chakra_schema_version json $small --din 1024 --dout 1024"
  "--dp 2 --tp 2 --pp 2 --chakra_schema_version v0.0.1 $small --din 1024 --dout 1024"
  "--model_type gpt --dp 2 --tp 2 --pp 2 --micro_batch 4 $small"
  "--model_type gpt --dp 2 --tp 2 --pp 4 --sp 2 --weight_sharded 1 $small --micro_batch 8"
  "--model_type llama --dp 2 --tp 2 --pp 2 --kvhead 4 $small --pipeline_schedule 1f1b --micro_batch 4"
  "--model_type moe --dp 2 --tp 2 --pp 2 --ep 2 --kvhead 4 $small --micro_batch 8"
  "--model_type gpt --dp 4 --tp 2 --pp 2 $small --zero_stage 2 --activation_recompute 1 --units physical"
  "--model_type dense --dp 8 --tp 4 --pp 4"
)
fail=0
for i in "${!configs[@]}"; do
  read -r -a flags <<<"${configs[$i]}"
  "$old" --quiet --output_dir "$work/old$i" "${flags[@]}"
  "$new" --quiet --output_dir "$work/new$i" "${flags[@]}"
  if diff -r -q "$work/old$i" "$work/new$i" >/dev/null; then
    echo "same  ${configs[$i]}"
  else
    echo "DIFF  ${configs[$i]}"
    fail=1
  fi
  rm -rf "$work/old$i" "$work/new$i"
done
exit $fail
