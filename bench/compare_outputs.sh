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
  # --framework megatron: every schedule, ZeRO 0-3, every recompute, ep
  "--framework megatron --model_type gpt --dp 2 --tp 2 --pp 2 --micro_batch 4 $small"
  "--framework megatron --model_type gpt --dp 2 --tp 2 --pp 2 --micro_batch 2 $small --pipeline_schedule gpipe --zero_stage 1 --activation_recompute full"
  "--framework megatron --model_type gpt --dp 2 --tp 2 --pp 4 --micro_batch 2 $small --pipeline_schedule 1f1b --zero_stage 2 --activation_recompute selective"
  "--framework megatron --model_type gpt --dp 2 --tp 2 --pp 2 --micro_batch 2 $small --pipeline_schedule interleaved --virtual_stages 2 --zero_stage 3"
  "--framework megatron --model_type llama --dp 2 --tp 2 --pp 2 --kvhead 4 --micro_batch 2 $small --pipeline_schedule 1f1b --tpsp 0 --print_gpu_vram 1"
  "--framework megatron --model_type llama --dp 2 --tp 2 --pp 2 --kvhead 4 --micro_batch 2 $small --pipeline_schedule interleaved --virtual_stages 2 --activation_recompute full"
  "--framework megatron --model_type moe --dp 4 --tp 2 --pp 2 --ep 2 --kvhead 4 --micro_batch 8 $small --pipeline_schedule 1f1b"
  "--framework megatron --model_type moe --dp 4 --tp 2 --pp 2 --ep 4 --kvhead 4 --micro_batch 16 --num_stacks 4 --dmodel 256 --dff 1024 --head 8 --seq 128 --batch 32 --pipeline_schedule gpipe --zero_stage 3 --activation_recompute selective"
  "--framework megatron --model_type moe --dp 2 --tp 1 --pp 1 --ep 2 --kvhead 4 --micro_batch 4 $small --zero_stage 1"
  # reference-mode schedules, lean traces, v0.0.1 and json under megatron
  "--model_type gpt --dp 2 --tp 2 --pp 2 --micro_batch 2 $small --pipeline_schedule gpipe --trace_detail sim"
  "--model_type llama --dp 2 --tp 2 --pp 2 --kvhead 4 --micro_batch 2 $small --pipeline_schedule interleaved --virtual_stages 2"
  "--framework megatron --model_type gpt --dp 2 --tp 2 --pp 2 --micro_batch 2 $small --pipeline_schedule 1f1b --trace_detail sim"
  "--framework megatron --model_type gpt --dp 2 --tp 2 --pp 2 --micro_batch 4 $small --pipeline_schedule 1f1b --chakra_schema_version v0.0.1"
  "--framework megatron --model_type llama --dp 2 --tp 2 --pp 2 --kvhead 4 --micro_batch 4 $small --chakra_schema_version json"
  # memory reports with one and two micro-batches
  "--model_type gpt --dp 2 --tp 2 --pp 2 --micro_batch 8 $small --print_gpu_vram 1 --pipeline_schedule 1f1b"
  "--framework megatron --model_type moe --dp 2 --tp 2 --pp 2 --ep 2 --kvhead 4 --micro_batch 16 $small --print_gpu_vram 1"
  "--model_type llama --dp 2 --tp 2 --pp 2 --kvhead 4 --micro_batch 16 $small --print_gpu_vram 1 --activation_recompute 1"
  # 512 micro-batches, both node orders
  "--model_type gpt --dp 1 --tp 2 --pp 2 --num_stacks 2 --dmodel 64 --dff 256 --head 4 --seq 32 --batch 512 --micro_batch 1 --pipeline_schedule 1f1b"
  "--framework megatron --model_type llama --dp 2 --tp 1 --pp 4 --kvhead 2 --num_stacks 8 --dmodel 64 --dff 256 --head 4 --seq 32 --batch 1024 --micro_batch 2 --pipeline_schedule interleaved --virtual_stages 2"
)
fail=0
for i in "${!configs[@]}"; do
  read -r -a flags <<<"${configs[$i]}"
  # What a run prints with --quiet (memory reports) is compared too.
  "$old" --quiet --output_dir "$work/old$i" "${flags[@]}" >"$work/old$i.out"
  "$new" --quiet --output_dir "$work/new$i" "${flags[@]}" >"$work/new$i.out"
  if diff -r -q "$work/old$i" "$work/new$i" >/dev/null && cmp -s "$work/old$i.out" "$work/new$i.out"; then
    echo "same  ${configs[$i]}"
  else
    echo "DIFF  ${configs[$i]}"
    fail=1
  fi
  rm -rf "$work/old$i" "$work/new$i" "$work/old$i.out" "$work/new$i.out"
done
exit $fail
