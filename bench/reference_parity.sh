#!/usr/bin/env bash
# Runs the later Python reference (astra-sim/symbolic_tensor_graph, 2025,
# 3a7f49c) on configurations beyond ../shared/reference and compares stg
# with it, rank by rank, using the shared tools (etstat.py, parity.py). For
# moe the reference is run from a temporary copy with its duplicated
# Batch -> MicroBatch rename removed (without it every moe run crashes; the
# shared `headpatched_*` cases are made the same way). Nothing of the
# reference is kept. Developer check, not a test: it needs the reference
# checkout, Debian's python3-sympy/-numpy/-pandas/-protobuf/-tqdm and
# ../shared/tools.
# Usage: bench/reference_parity.sh REFERENCE_CHECKOUT [--big]
#   --big adds full-size cases (80 layers; the reference takes 0.5-3 min each)
set -euo pipefail
ref=$(cd "$1" && pwd)
big=${2:-}
cd "$(dirname "$0")/.."
tools=$(cd ../shared/tools && pwd)
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DSTG_BUILD_TESTS=OFF >/dev/null
cmake --build build-bench -j"$(nproc)" --target stg >/dev/null
stg=$PWD/build-bench/stg
scratch=$(mktemp -d "${TMPDIR:-/tmp}/stg_refparity.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# The moe-runnable copy: drop the rename that follows the micro-batch
# replication in the moe branch (the replicator already renames).
cp -r "$ref" "$scratch/patched"
python3 - "$scratch/patched/main.py" <<'EOF'
import re, sys
path = sys.argv[1]
text = open(path).read()
pattern = re.compile(r'(assert False, "disable for now"\n)'
                     r'        transformer_moe = ReplicateGraph\.apply\(\n'
                     r'            transformer_moe,\n            inplace=True,\n'
                     r'            old_symbol_map_new_symbol=\{"Batch": "MicroBatch"\},\n        \)\n')
patched, n = pattern.subn(r'\1', text, count=1)
if n != 1:
    sys.exit("reference_parity: the moe patch does not apply to this reference version")
open(path, "w").write(patched)
EOF

small="--num_stacks 2 --dmodel 1024 --dff 4096 --head 16 --kvhead 4 --seq 512 --batch 8 --dvocal 32000"
# name | reference flags (stg takes the same, --model_type dense -> gpt)
cases=(
  "gpt_pp4_s4_mb2|--dp 2 --tp 2 --pp 4 --model_type dense $small --num_stacks 4 --micro_batch 4"
  "gpt_sp2_fsdp_mb2|--dp 2 --tp 2 --pp 2 --sp 2 --weight_sharded 1 --model_type dense $small --micro_batch 4"
  "gpt_ep2|--dp 2 --tp 2 --ep 2 --model_type dense $small"
  "gpt_dp4_tp1|--dp 4 --model_type dense $small"
  "gpt_tpsp0_fsdp_mb2|--dp 2 --tp 2 --pp 2 --weight_sharded 1 --tpsp 0 --model_type dense $small --micro_batch 4"
  "llama_mixed_sp2_fsdp|--dp 2 --tp 2 --pp 2 --sp 2 --weight_sharded 1 --model_type llama --mixed_precision 1 $small"
  "llama_mixed_pp3_s4|--tp 2 --pp 3 --model_type llama --mixed_precision 1 $small --num_stacks 4"
  "moe_ep2_fsdp_mb2|--dp 2 --tp 2 --pp 2 --ep 2 --weight_sharded 1 --model_type moe $small --micro_batch 4 --experts 4 --kexperts 2"
  "moe_sp2_ep2|--tp 2 --sp 2 --pp 2 --ep 2 --model_type moe $small"
)
if [ "$big" = "--big" ]; then
  cases+=(
    "gpt_default|--dp 2 --tp 2 --pp 2 --model_type gpt"
    "gpt_default_dp8_tp4_pp4|--dp 8 --tp 4 --pp 4 --model_type gpt"
    "gpt_default_mb8|--dp 2 --tp 2 --pp 2 --model_type gpt --micro_batch 8"
    "gpt_default_dp64_fsdp|--dp 64 --weight_sharded 1 --model_type gpt"
    "llama_default_mixed|--dp 2 --tp 2 --pp 2 --model_type llama --mixed_precision 1"
    "moe_default_ep2|--dp 2 --tp 2 --pp 2 --ep 2 --model_type moe"
  )
fi

: >"$scratch/cases.tsv"
for entry in "${cases[@]}"; do
  name=${entry%%|*}
  flags=${entry#*|}
  dir=$ref
  [[ $flags == *"--model_type moe"* ]] && dir=$scratch/patched
  mkdir -p "$scratch/ref/$name"
  start=$(date +%s.%N)
  (cd "$dir" && /usr/bin/python3 main.py --output_dir "$scratch/out" \
    --output_name workload.%d.et $flags >"$scratch/ref/$name/log.txt" 2>&1) ||
    { echo "reference failed on $name:"; tail -3 "$scratch/ref/$name/log.txt"; exit 1; }
  echo "reference $name: $(echo "$(date +%s.%N) - $start" | bc) s"
  python3 "$tools/etstat.py" --json "$scratch/out" >"$scratch/ref/$name/summary.json"
  cp "$scratch/out"/*.json "$scratch/ref/$name/"
  rm -rf "$scratch/out"
  printf '%s\trank\t--output_name workload.%%d.et %s\n' "$name" "${flags/--model_type dense/--model_type gpt}" \
    >>"$scratch/cases.tsv"
done
python3 "$tools/parity.py" --stg "$stg" --ref "$scratch/ref" --cases "$scratch/cases.tsv"
