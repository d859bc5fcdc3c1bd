#!/bin/sh
# experiments/bulk_ab.sh: the large-transfer figures as an A/B of two builds on a busy
# machine: in each of --rounds rounds, the bare TCP floor (tcp_stream_floor) and then, for
# every transport:call pair (and with a udp pair, the best delivered stream of our bare udp
# transport, layer_pingpong), one bsp_bandwidth run (one 8 MiB transfer per superstep, 20
# repetitions, p = 2) of the --before build and one of this one, alternately. Prints the
# raw rows and, per pair and build, the best of the rounds' bests and the median of their
# medians (GB/s).
# Run from the workspace root after `bazel build //bench/... //bsplib:bsprun`.
# Usage: experiments/bulk_ab.sh --before=DIR [--rounds=6] [--pairs=tcp:put,tcp:hpput,tcp:get,udp:put,udp:hpput,nic:put]
# --help prints the comment above.
case " $* " in *" --help "* | *" -h "*) sed -n '2,/^[^#]/p' "$0" | sed '/^[^#]/d; s/^# \{0,1\}//'; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
before=""
rounds=6
pairs="tcp:put,tcp:hpput,tcp:get,udp:put,udp:hpput,nic:put"
for arg in "$@"; do
  case $arg in
    --before=*) before=${arg#*=} ;;
    --rounds=*) rounds=${arg#*=} ;;
    --pairs=*) pairs=${arg#*=} ;;
    *) echo "usage: experiments/bulk_ab.sh --before=DIR [--rounds=N] [--pairs=T:V,...]" >&2; exit 2 ;;
  esac
done
[ -n "$before" ] || { echo "experiments/bulk_ab.sh: --before=DIR is needed (bsprun and bench/ of the older build)" >&2; exit 2; }
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
i=0
while [ $i -lt "$rounds" ]; do
  echo "floor tcp - $(bazel-bin/bench/tcp_stream_floor --csv=1 --zerocopy=0 | awk -F, '{print $4, $5}') load=$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$rows"
  # With a udp pair: our bare udp transport's best delivered stream (8 KiB and 64 KiB
  # frames, GB/s; the same number twice, as best and median) in the same round.
  case ",$pairs," in *,udp:*)
    best=0
    for size in 8192 65000; do
      rate=$(bazel-bin/bench/layer_pingpong --transport=udp --layer=transport --test=bandwidth --size=$size \
          --count=20000 --batch=32 2>/dev/null | sed -n 's/.*delivered_MBps=\([0-9.]*\).*/\1/p' | tail -1)
      best=$(awk -v a="$best" -v b="${rate:-0}" 'BEGIN {print (b > a) ? b : a}')
    done
    echo "floor udp - $(awk -v r="$best" 'BEGIN {printf "%.2f %.2f", r / 1000, r / 1000}')" | tee -a "$rows" ;;
  esac
  for pair in $(echo "$pairs" | tr ',' ' '); do
    t=${pair%%:*}
    v=${pair#*:}
    for build in before after; do
      if [ $build = before ]; then run="$before/bsprun"; dir=$before; else run=bazel-bin/bsplib/bsprun; dir=bazel-bin; fi
      rate=$("$run" -n 2 --transport="$t" "$dir/bench/bsp_bandwidth" --sizes=8388608 --bytes=8388608 --repetitions=20 \
          --via="$v" 2>/dev/null | awk -F, '$3 == 8388608 {print $6 / 1000, $7 / 1000}')
      echo "$build $t $v ${rate:-0 0}" | tee -a "$rows"
    done
  done
  i=$((i + 1))
done
echo
echo "| transport | call | build | rounds | best of bests | median of medians |"
echo "|---|---|---|---|---|---|"
python3 - "$rows" <<'PY'
import statistics, sys
groups = {}
for line in open(sys.argv[1]):
    build, transport, call, best, median = line.split()[:5]
    groups.setdefault((transport, call, build), []).append((float(best), float(median)))
for (transport, call, build), runs in sorted(groups.items(), key=lambda item: (item[0][0], item[0][1], item[0][2] != "before")):
    print(f"| {transport} | {call} | {build} | {len(runs)} | {max(b for b, _ in runs):.2f} | "
          f"{statistics.median(m for _, m in runs):.2f} |")
PY
