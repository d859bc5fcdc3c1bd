#!/bin/bash
# tools/compare_versions.sh: are two commits alike in behaviour and speed? Builds each commit
# (a detached git worktree under WORK, or a checkout given with --before-tree/--after-tree)
# and copies what it runs into its own prefix, WORK/old and WORK/new (bsplib/bsprun,
# bench/*, nas/<benchmark>: the kernels' old //nas:cg and the new //nas/cg:cg layout land
# alike). Then runs, interleaved (before, after, after, before, ... so that the machine's
# load falls on both alike), in --rounds rounds:
#   nas    every NAS benchmark over every transport (the main job, tools/nas_compare.sh):
#          bsprun -n PROCS [--transport=T] nas/B --class=C; each run must verify
#          ("default" runs with no --transport: bsprun's own default); the report's
#          seconds and the CPU seconds of all processes together (each run under sh, whose
#          `times` reports it): under load the wall time is mostly waiting, the CPU time the work
#   bench  bench/sync_time 20000 at p = 2 and 4 (empty superstep, 4-byte put + sync),
#          bench/bsp_bandwidth at p = 2: 1400-byte puts, 16 MiB in one superstep (MB/s),
#          and one 8 MiB bsp_put per superstep (MB/s), over each --bench-transports
# and prints markdown: medians of each version, after/before, for the bench figures also the
# spread (max/min over the rounds of either version), with the load average at start, each round and end. Raw rows go to
# WORK/raw.csv (kind,round,version,case,transport,metric,value).
# Usage: tools/compare_versions.sh [--before=REV] [--after=REV] [--before-tree=DIR]
#   [--after-tree=DIR] [--work=/tmp/compare_versions] [--rounds=2] [--bench-rounds=N]
#   [--class=W] [--procs=4]
#   [--benchmarks=ep,is,cg,mg,ft,lu,bt,sp] [--transports=shm,tcp,udp,nic,default]
#   [--bench-transports=shm,tcp,udp] [--only=nas|bench] [--no-build]
# Defaults: --before=HEAD~1 --after=HEAD, --bench-rounds as --rounds (the bench figures take
# seconds, NAS class W minutes: more bench rounds cost little). Run from anywhere inside the repository.
# Shares the 2-core-friendly habit of the rest: one run at a time, nothing in parallel.
# --help prints the comment above.
case " $* " in *" --help "* | *" -h "*) sed -n '2,/^[^#]/p' "$0" | sed '/^[^#]/d; s/^# \{0,1\}//'; exit 0 ;; esac
set -euo pipefail
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
before_rev=HEAD~1 after_rev=HEAD before_tree="" after_tree=""
work=/tmp/compare_versions rounds=2 bench_rounds="" class=W procs=4
benchmarks=ep,is,cg,mg,ft,lu,bt,sp transports=shm,tcp,udp,nic,default bench_transports=shm,tcp,udp
only="" build=1
for arg in "$@"; do
  case $arg in
    --before=*) before_rev=${arg#*=} ;;
    --after=*) after_rev=${arg#*=} ;;
    --before-tree=*) before_tree=${arg#*=} ;;
    --after-tree=*) after_tree=${arg#*=} ;;
    --work=*) work=${arg#*=} ;;
    --rounds=*) rounds=${arg#*=} ;;
    --bench-rounds=*) bench_rounds=${arg#*=} ;;
    --class=*) class=${arg#*=} ;;
    --procs=*) procs=${arg#*=} ;;
    --benchmarks=*) benchmarks=${arg#*=} ;;
    --transports=*) transports=${arg#*=} ;;
    --bench-transports=*) bench_transports=${arg#*=} ;;
    --only=*) only=${arg#*=} ;;
    --no-build) build=0 ;;
    *) echo "compare_versions: unknown option '$arg' (--help lists them)" >&2; exit 2 ;;
  esac
done
case "$only" in "" | nas | bench) ;; *) echo "compare_versions: --only takes nas or bench, not '$only'" >&2; exit 2 ;; esac
bench_rounds=${bench_rounds:-$rounds}
mkdir -p "$work"

# The source tree of a version: the given checkout, or a detached worktree of the commit.
tree_of() {  # name rev given_tree
  if [ -n "$3" ]; then echo "$3"; return; fi
  local dir="$work/src-$1"
  if [ ! -d "$dir" ]; then git -C "$repo" worktree add --detach "$dir" "$2" >&2; fi
  git -C "$dir" checkout --quiet --detach "$2"
  echo "$dir"
}

# Where a version's binaries go: WORK/old and WORK/new, names of one length. The length of
# the program's path moves the start of its stack (argv and the environment sit above it),
# and that alone made NAS BT 30% slower in CPU time from WORK/after than from WORK/before
# with byte-identical binaries (its 5x5 block solver works on the stack).
prefix_of() { if [ "$1" = before ]; then echo "$work/old"; else echo "$work/new"; fi; }

# Builds a version and copies its binaries into its prefix.
build_into() {  # name tree
  local prefix; prefix=$(prefix_of "$1"); local tree=$2 b
  local targets="//bsplib:bsprun //nas/... //bench:sync_time //bench:bsp_bandwidth"
  echo "building $1 ($(git -C "$tree" rev-parse --short HEAD)) in $tree ..." >&2
  (cd "$tree" && bazel build $targets) > "$work/build-$1.log" 2>&1 ||
    { echo "compare_versions: the build of $1 failed; see $work/build-$1.log" >&2; exit 1; }
  rm -rf "$prefix"
  mkdir -p "$prefix/bsplib" "$prefix/bench" "$prefix/nas"
  cp "$tree/bazel-bin/bsplib/bsprun" "$prefix/bsplib/"
  cp "$tree/bazel-bin/bench/sync_time" "$tree/bazel-bin/bench/bsp_bandwidth" "$prefix/bench/"
  for b in ${benchmarks//,/ }; do
    if [ -f "$tree/bazel-bin/nas/$b/$b" ]; then cp "$tree/bazel-bin/nas/$b/$b" "$prefix/nas/$b"
    elif [ -f "$tree/bazel-bin/nas/$b" ]; then cp "$tree/bazel-bin/nas/$b" "$prefix/nas/$b"
    else echo "compare_versions: $1 has no NAS $b" >&2; exit 1; fi
  done
  git -C "$tree" rev-parse HEAD > "$prefix/commit"
}

if [ "$build" = 1 ]; then
  build_into before "$(tree_of before "$before_rev" "$before_tree")"
  build_into after "$(tree_of after "$after_rev" "$after_tree")"
fi
for v in before after; do
  [ -x "$(prefix_of $v)/bsplib/bsprun" ] || { echo "compare_versions: no build in $(prefix_of $v) (run without --no-build)" >&2; exit 1; }
done

raw="$work/raw.csv"
echo "kind,round,version,case,transport,metric,value" > "$raw"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
transport_flag() { [ "$1" = default ] || echo "--transport=$1"; }

nas_once() {  # round version benchmark transport
  local p; p=$(prefix_of "$2"); local out
  # shellcheck disable=SC2046
  # Each process runs under sh, whose `times` then prints its child's CPU time (user, system):
  # on a loaded machine the wall time is mostly waiting for a core, the CPU time is the work.
  out=$(timeout 900 "$p/bsplib/bsprun" -n "$procs" $(transport_flag "$4") /bin/sh -c \
        '"$@"; status=$?; times >&2; exit $status' sh "$p/nas/$3" --class="$class" 2>&1) || true
  local seconds verified cpu
  seconds=$(echo "$out" | sed -n 's/.*Time in seconds *= *\([0-9.]*\).*/\1/p' | head -n 1)
  cpu=$(echo "$out" | awk '/^[0-9]+m[0-9.]+s [0-9]+m[0-9.]+s$/ {
          for (i = 1; i <= 2; ++i) { split($i, t, "m"); sum += t[1] * 60 + t[2] } } END {printf "%.2f", sum}')
  verified=$(echo "$out" | sed -n 's/.*Verification *= *\([A-Z]*\).*/\1/p' | head -n 1)
  if [ -z "$seconds" ] || [ "$verified" != SUCCESSFUL ]; then
    echo "compare_versions: $2 $3 over $4 did not verify:" >&2
    echo "$out" | tail -n 20 >&2
    echo "nas,$1,$2,$3,$4,failed,1" >> "$raw"
    return
  fi
  echo "nas,$1,$2,$3,$4,seconds,$seconds" >> "$raw"
  echo "nas,$1,$2,$3,$4,cpu_seconds,$cpu" >> "$raw"
  # Behaviour: the same supersteps (and verification, above) before and after.
  local steps
  steps=$(echo "$out" | sed -n 's/.*Supersteps *= *\([0-9]*\).*/\1/p' | head -n 1)
  [ -z "$steps" ] || echo "nas,$1,$2,$3,$4,supersteps,$steps" >> "$raw"
  printf '  round %s %-6s %-3s %-7s %8.2f s, CPU %8.2f s (all processes)\n' "$1" "$2" "$3" "$4" "$seconds" "$cpu" >&2
}

bench_once() {  # round version transport
  local p; p=$(prefix_of "$2"); local t=$3 out n
  for n in 2 4; do
    # shellcheck disable=SC2046
    out=$(timeout 300 "$p/bsplib/bsprun" -n "$n" $(transport_flag "$t") "$p/bench/sync_time" 20000 2>&1) || true
    echo "$out" | awk -v r="$1" -v v="$2" -v t="$t" -v n="$n" '
      /no communication/ {print "bench," r "," v ",empty_sync_p" n "," t ",median_us," $(NF-4)}
      /4-byte bsp_put/   {print "bench," r "," v ",put4_sync_p" n "," t ",median_us," $(NF-4)}' >> "$raw"
  done
  # shellcheck disable=SC2046
  out=$(timeout 300 "$p/bsplib/bsprun" -n 2 $(transport_flag "$t") "$p/bench/bsp_bandwidth" --sizes=1400 \
        --repetitions=5 2>&1) || true
  echo "$out" | awk -F, -v r="$1" -v v="$2" -v t="$t" '$3 == 1400 {print "bench," r "," v ",put1400_stream," t ",median_MBps," $7}' >> "$raw"
  # shellcheck disable=SC2046
  out=$(timeout 300 "$p/bsplib/bsprun" -n 2 $(transport_flag "$t") "$p/bench/bsp_bandwidth" --sizes=8388608 \
        --bytes=8388608 --repetitions=20 --via=put 2>&1) || true
  echo "$out" | awk -F, -v r="$1" -v v="$2" -v t="$t" '$3 == 8388608 {print "bench," r "," v ",put_8MiB," t ",median_MBps," $7}' >> "$raw"
  echo "  round $1 $2 bench over $t done" >&2
}

# Within a round the order alternates (before first, then after first) from one run to the next.
order() {  # index
  if [ $(($1 % 2)) = 0 ]; then echo "before after"; else echo "after before"; fi
}
all_rounds=$((rounds > bench_rounds ? rounds : bench_rounds))
for round in $(seq 1 "$all_rounds"); do
  index=$round
  echo "load,$round,-,-,-,load1,$(cut -d' ' -f1 /proc/loadavg)" >> "$raw"
  if [ "$only" != bench ] && [ "$round" -le "$rounds" ]; then
    for t in ${transports//,/ }; do
      for b in ${benchmarks//,/ }; do
        for v in $(order "$index"); do nas_once "$round" "$v" "$b" "$t"; done
        index=$((index + 1))
      done
    done
  fi
  if [ "$only" != nas ] && [ "$round" -le "$bench_rounds" ]; then
    for t in ${bench_transports//,/ }; do
      for v in $(order "$index"); do bench_once "$round" "$v" "$t"; done
      index=$((index + 1))
    done
  fi
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$raw" "$load_start" "$load_end" "$class" "$procs" "$rounds" "$bench_rounds" <<'PY'
import collections, csv, statistics, sys
raw, load_start, load_end, problem_class, procs, rounds, bench_rounds = sys.argv[1:]
values = collections.defaultdict(lambda: collections.defaultdict(list))
failed, loads = [], []
for row in csv.DictReader(open(raw)):
    if row["kind"] == "load":
        loads.append(float(row["value"]))
        continue
    if row["metric"] == "failed":
        failed.append(f"{row['version']} {row['case']} over {row['transport']} (round {row['round']})")
        continue
    values[(row["kind"], row["case"], row["transport"], row["metric"])][row["version"]].append(float(row["value"]))
print(f"load average (1, 5, 15 min): {load_start} at start, {load_end} at end; {rounds} NAS rounds and {bench_rounds} bench rounds, interleaved; 1-minute load at the rounds' starts: " +
      ", ".join(f"{x:.1f}" for x in loads) + "\n")
def cell(got):
    b, a = got.get("before", []), got.get("after", [])
    if not b or not a:
        return "-"
    mb, ma = statistics.median(b), statistics.median(a)
    return f"{mb:.2f} / {ma:.2f} ({ma / mb:.2f})" if mb > 0 else f"{mb:.2f} / {ma:.2f}"

def spread(xs):
    return f"{max(xs) / min(xs):.2f}" if xs and min(xs) > 0 else "-"

nas = {k[1:]: v for k, v in values.items() if k[0] == "nas"}
if nas:
    cases = list(dict.fromkeys(k[0] for k in nas))
    transports = list(dict.fromkeys(k[1] for k in nas))
    for metric, title in (("seconds", "the report's time in seconds"),
                          ("cpu_seconds", "CPU seconds of all processes together")):
        print(f"### NAS class {problem_class}, p = {procs}: {title}, medians before / after (after/before)\n")
        print("| benchmark | " + " | ".join(transports) + " |")
        print("|---|" + "---|" * len(transports))
        for c in cases:
            print(f"| {c.upper()} | " + " | ".join(cell(nas.get((c, t, metric), {})) for t in transports) + " |")
        print()
    differ = [f"{c} over {t}: {sorted(set(g.get('before', [])))} before, {sorted(set(g.get('after', [])))} after"
              for (c, t, m), g in nas.items() if m == "supersteps" and set(g.get("before", [])) != set(g.get("after", []))]
    steps = [1 for (c, t, m) in nas if m == "supersteps"]
    print("supersteps: " + ("; ".join(differ) if differ else f"the same before and after in all {len(steps)} cells") + "\n")
bench = [k for k in values if k[0] == "bench"]
if bench:
    print("### bench figures: medians over the rounds (each round's figure is the program's median)\n")
    print("| figure | transport | unit | before | after | after/before | spread before | spread after |")
    print("|---|---|---|---|---|---|---|---|")
    for key in bench:
        got = values[key]
        b, a = got.get("before", []), got.get("after", [])
        if not b or not a:
            print(f"| {key[1]} | {key[2]} | {key[3]} | {b} | {a} | - | - | - |")
            continue
        mb, ma = statistics.median(b), statistics.median(a)
        ratio = f"{ma / mb:.2f}" if mb > 0 else "-"
        print(f"| {key[1]} | {key[2]} | {key[3]} | {mb:.2f} | {ma:.2f} | {ratio} | {spread(b)} | {spread(a)} |")
    print()
if failed:
    print("did not verify / failed: " + "; ".join(failed))
PY
