#!/usr/bin/env bash
# The README's first example: dp2 tp2 pp2 seed transformer, 8 traces plus
# comm_group.json in generated/ at the repository root.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./build/stg --output_dir generated/ --output_name workload.%d.et \
  --comm_group_file comm_group.json --dp 2 --tp 2 --pp 2 --weight_sharded 0 "$@"
