#!/bin/sh
# tests/profile/measure_overhead.sh: the profiler's cost (its budget: at most 2% on
# NAS class W): runs each benchmark REPS times without and with --profile, alternating, and
# prints the median "Time in seconds" of each and the difference. Run from the workspace
# root after `bazel build //bsplib:bsprun //nas/...`:
#   tests/profile/measure_overhead.sh [BENCHMARKS (cg,is,mg)] [TRANSPORTS (shm,tcp)] [REPS (5)] [P (4)] [CLASS (W)]
set -e
benchmarks=${1:-cg,is,mg}
transports=${2:-shm,tcp}
reps=${3:-5}
procs=${4:-4}
class=${5:-W}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bspprof-overhead.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
seconds() { sed -n 's/.*Time in seconds *= *\([0-9.]*\).*/\1/p' "$1"; }
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
printf '%-4s %-6s %10s %10s %9s\n' bench transport "off (s)" "on (s)" overhead
for b in $(echo "$benchmarks" | tr , ' '); do
  for t in $(echo "$transports" | tr , ' '); do
    : > "$tmp/off"; : > "$tmp/on"
    i=0
    while [ $i -lt "$reps" ]; do
      bazel-bin/bsplib/bsprun -n "$procs" --transport="$t" "bazel-bin/nas/$b/$b" --class="$class" > "$tmp/out" 2>&1
      seconds "$tmp/out" >> "$tmp/off"
      bazel-bin/bsplib/bsprun -n "$procs" --transport="$t" --profile="$tmp/p.prof" --overwrite "bazel-bin/nas/$b/$b" --class="$class" > "$tmp/out" 2>&1
      grep -q SUCCESSFUL "$tmp/out" || { echo "$b over $t failed with --profile" >&2; cat "$tmp/out" >&2; exit 1; }
      seconds "$tmp/out" >> "$tmp/on"
      i=$((i + 1))
    done
    off=$(median < "$tmp/off")
    on=$(median < "$tmp/on")
    steps=$(bazel-bin/tools/bspprof/bspprof "$tmp/p.prof" --no-plots --out="$tmp/r" | sed -n '1s/.*, \([0-9]*\) supersteps.*/\1/p')
    printf '%-4s %-6s %10s %10s %8.2f%%  (%s supersteps)\n' "$b" "$t" "$off" "$on" \
      "$(echo "$on $off" | awk '{print 100 * ($1 - $2) / $2}')" "$steps"
  done
done
