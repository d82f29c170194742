#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/fuzz_*.cc) with clang into build-fuzz/
# and runs each for SECONDS seconds (default 60), at most one per core at a
# time. Seeds: fuzz/corpus/<target>/ (read only; new inputs go to
# build-fuzz/corpus/<target>/). Inputs that crash (or leak, throw, trip a
# sanitizer) are written to fuzz/crashes/<target>-crash-<sha1> (leak-, ...)
# and the script exits 1; slow or oversized inputs (timeout-, slow-unit-,
# oom-) are kept there too and reported, and fail the run only with
# --strict. Reproduce with build-fuzz/<target> fuzz/crashes/<file>.
# Installs clang-14 and libclang-rt-14-dev with apt-get when clang or
# libFuzzer is missing (needs root then).
#   usage: bash fuzz/run.sh [--strict] [SECONDS] [TARGET...]
#          bash fuzz/run.sh [--strict] ci [TARGET...]   (CI: a fixed seed and
#          a fixed number of runs per target, so the result is reproducible)
#   --strict may stand anywhere among the arguments.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

strict=0
args=()
for a in "$@"; do
  if [[ "$a" == --strict ]]; then strict=1; else args+=("$a"); fi
done
set -- "${args[@]}"

ci_runs=0
if [[ "${1:-}" == ci ]]; then
  ci_runs=20000
  set -- 60 "${@:2}"
fi
duration="${1:-60}"
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(fuzz_expr fuzz_csv fuzz_trace fuzz_hf_config)

cxx=$(bash scripts/clang_cxx.sh)

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [[ -f build-fuzz/CMakeCache.txt ]] && ! grep -q "^CMAKE_GENERATOR:INTERNAL=${generator[1]:-Unix Makefiles}$" build-fuzz/CMakeCache.txt; then
  rm -rf build-fuzz  # configured with another generator
fi
# -O1 -g1: half the compile time of -O2 -g (replay.cc: 27 s against 53 s);
# CI builds the fuzz targets from scratch on two cores.
cmake -S . -B build-fuzz "${generator[@]}" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DSTG_FUZZ=ON -DSTG_BUILD_TESTS=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]}"

mkdir -p fuzz/crashes
# Runs one target until its time is up. A crash, a leak, an uncaught
# exception or a sanitizer report stops it (exit 1). An input that is merely
# slow (timeout-, slow-unit-) or too big (oom-) is kept in fuzz/crashes/ and
# fuzzing resumes for the remaining time; such findings fail the run only
# with --strict. Writes build-fuzz/<target>.{log,stats}.
run_one() {
  local t="$1" log="build-fuzz/$1.log" stats="build-fuzz/$1.stats"
  local deadline=$(($(date +%s) + duration)) execs=0 resource=0 rc=0 part remaining artifact n
  mkdir -p "build-fuzz/corpus/$t"
  : >"$log"
  part="build-fuzz/$t.part.log"
  while remaining=$((deadline - $(date +%s))); [[ $remaining -gt 0 ]]; do
    rc=0
    # -timeout: an input that takes 10 s is a finding (the inputs are small);
    # -rss_limit_mb (and the malloc limit it implies): so is one that needs 2 GB.
    limit=(-max_total_time="$remaining")
    # CI: a fixed seed and run count (build-fuzz/ is new in CI, so the
    # inputs are the repository's seeds plus what this run derives from them).
    [[ $ci_runs -gt 0 ]] && limit=(-runs="$ci_runs" -seed=1)
    "build-fuzz/$t" "build-fuzz/corpus/$t" "fuzz/corpus/$t" \
      "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
      -artifact_prefix="fuzz/crashes/$t-" -print_final_stats=1 >"$part" 2>&1 || rc=$?
    cat "$part" >>"$log"
    # grep -a: the logs can hold raw input bytes.
    n=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$part" | grep -o '[0-9]*$' | tail -1 || true)
    [[ -z "$n" ]] && n=$(grep -ao '^#[0-9]*' "$part" | tail -1 | tr -d '#' || true)
    execs=$((execs + ${n:-0}))
    [[ $rc -eq 0 ]] && break
    artifact=$(grep -ao 'Test unit written to .*' "$part" | tail -1 | sed 's/Test unit written to //' || true)
    case "$(basename "${artifact:-none}")" in
      "$t"-timeout-* | "$t"-slow-unit-* | "$t"-oom-*)
        resource=$((resource + 1))
        echo "fuzz: $t: resource limit hit, input kept in $artifact; resuming" >&2
        rc=0
        ;;
      *) break ;;
    esac
  done
  echo "$execs $resource $rc" >"$stats"
  rm -f "$part"
  [[ $rc -eq 0 ]]
}

jobs_max=$(nproc)
declare -A pids=()
for t in "${targets[@]}"; do
  while [[ $(jobs -rp | wc -l) -ge $jobs_max ]]; do sleep 1; done
  if [[ $ci_runs -gt 0 ]]; then echo "fuzz: $t for $ci_runs runs (seed 1)"; else echo "fuzz: $t for ${duration}s"; fi
  run_one "$t" &
  pids[$t]=$!
done
status=0
summary=()
for t in "${targets[@]}"; do
  rc=0
  wait "${pids[$t]}" || rc=$?
  log="build-fuzz/$t.log"
  read -r execs resource _ <"build-fuzz/$t.stats" || true
  cov=$(grep -ao 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || true)
  rate=$((${execs:-0} / duration))
  line="$t: ${execs:-?} executions in ${duration}s (${rate}/s), coverage ${cov:-?}"
  [[ $ci_runs -gt 0 ]] && line="$t: ${execs:-?} executions (seed 1), coverage ${cov:-?}"
  if [[ ${resource:-0} -gt 0 ]]; then
    line="$line, $resource slow/oversized input(s) kept in fuzz/crashes/"
    [[ $strict -eq 1 ]] && status=1
  fi
  if [[ $rc -ne 0 ]]; then
    status=1
    line="$line: FOUND A CRASH, see $log"
    grep -aE '^==[0-9]+==ERROR|SUMMARY:|Test unit written to|runtime error:|uncaught|fuzz_' "$log" | head -8 >&2 || true
  fi
  summary+=("$line")
done
printf 'fuzz: %s\n' "${summary[@]}"
exit "$status"
