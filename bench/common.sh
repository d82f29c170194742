# Shared by the bench/ scripts that measure one stg binary (sourced, not run):
#   bench_init NAME "$@"  parses RUNS (a positive number), --stg PATH,
#                         --scratch DIR and --help (the calling script's
#                         header comment), checks the binary, and sets
#                         $runs, $stg (absolute) and $scratch (a fresh
#                         directory removed on exit). A script with flags of
#                         its own defines bench_extra_arg FLAG first: it
#                         returns 0 when it took the flag.
#   median                the median of the numbers on stdin ($runs of them)
#   time_run OUT ARGS...  runs stg ARGS into OUT (--output_dir OUT after
#                         ARGS, so ARGS may start with a subcommand) under
#                         /usr/bin/time -v (stg's summary line on stdout,
#                         the figures in $scratch/time.txt); OUT is removed
#                         and the page cache flushed (sync) first, so that
#                         the writeback of an earlier run does not land in
#                         this one
#   median_run OUT ARGS...  $runs runs of time_run, then OUT removed; sets
#                         $wall (median of stg's own seconds, from its
#                         summary line), $rss_kb (median peak RSS) and, from
#                         the last run's summary, $bytes and $nodes written
#   wall_seconds, cpu_seconds, peak_rss_kb   read $scratch/time.txt
# The caller has `set -euo pipefail` and is at the repository root.

bench_init() {
  local name=$1
  shift
  runs=${runs:-1}
  stg=build/stg
  local scratch_parent=${TMPDIR:-/tmp}
  while [ $# -gt 0 ]; do
    case $1 in
      --stg) stg=$2; shift ;;
      --scratch) scratch_parent=$2; shift ;;
      -h | --help)
        sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
        exit 0
        ;;
      *)
        if [[ $1 =~ ^[1-9][0-9]*$ ]]; then
          runs=$1
        elif ! { declare -F bench_extra_arg >/dev/null && bench_extra_arg "$1"; }; then
          echo "$name: unknown argument '$1' (see --help)" >&2
          exit 2
        fi
        ;;
    esac
    shift
  done
  if [ ! -x "$stg" ]; then
    echo "$name: no stg binary at $stg: build one (bash scripts/build.sh) or pass --stg PATH" >&2
    exit 2
  fi
  stg=$(realpath "$stg")
  scratch=$(mktemp -d "$scratch_parent/stg_${name%.sh}.XXXXXX")
  trap 'rm -rf "$scratch"' EXIT
}

median() { sort -g | sed -n "$(((runs + 1) / 2))p"; }

time_run() {
  local out=$1
  shift
  rm -rf "$out"
  sync
  /usr/bin/time -v -o "$scratch/time.txt" "$stg" "$@" --output_dir "$out" | tail -1
}

median_run() {
  local out=$1 summary i walls=() rsss=()
  shift
  for ((i = 0; i < runs; i++)); do
    summary=$(time_run "$out" "$@")
    walls+=("$(sed -n 's/.* nodes in \([0-9.]*\) s .*/\1/p' <<<"$summary")")
    rsss+=("$(peak_rss_kb)")
  done
  rm -rf "$out"
  wall=$(printf '%s\n' "${walls[@]}" | median)
  rss_kb=$(printf '%s\n' "${rsss[@]}" | median)
  bytes=$(sed -n 's/.* files, \([0-9]*\) bytes, .*/\1/p' <<<"$summary")
  nodes=$(sed -n 's/.* bytes, \([0-9]*\) nodes in .*/\1/p' <<<"$summary")
}

# Elapsed (wall clock) time (h:mm:ss or m:ss): 1:02.34
wall_seconds() {
  sed -n 's/.*Elapsed (wall clock) time.*: //p' "$scratch/time.txt" |
    awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }'
}
cpu_seconds() { awk -F': ' '/User time|System time/ { s += $2 } END { print s }' "$scratch/time.txt"; }
peak_rss_kb() { sed -n 's/.*Maximum resident set size (kbytes): //p' "$scratch/time.txt"; }
