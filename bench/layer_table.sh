#!/bin/bash
# bench/layer_table.sh: what each layer of the stack adds, per transport, on lo or across
# a namespace cluster (--netns=PREFIX, made by tools/cluster.sh up 2+). For the
# bare transport (frames, no reliability), the reliable channel (bench/layer_pingpong) and
# a BSPlib superstep (bench/bsp_roundtrip, bench/bsp_bandwidth under bsprun), it measures
# the 4-byte round trip (median and minimum) and the 1400-byte one-way bandwidth, writes
# DIR/layers.csv (--append: adds to it) and prints the table with each layer's added
# cost. A layer that fails is reported as "failed" (its log is in DIR/logs) and the table
# goes on.
#   bench/layer_table.sh [--transports=tcp,udp,nic] [--out=results/bench] [--quick]
#     [--ack-policy=buffer] [--timeout=120] [--netns=PREFIX --network=NAME] [--append]
#     [--stats]  (packet counters of the reliable and BSPlib runs, printed from their logs)
#   (run from the workspace)
# --help prints the comment above.
case " $* " in *" --help "* | *" -h "*) sed -n '2,/^[^#]/p' "$0" | sed '/^[^#]/d; s/^# \{0,1\}//'; exit 0 ;; esac
set -u
transports="" out=results/bench quick=0 ack_policy="" limit=120 netns="" network=lo append=0 stats=0
for arg in "$@"; do
  case "$arg" in
    --transports=*) transports=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    --quick) quick=1 ;;
    --ack-policy=*) ack_policy=${arg#*=} ;;
    --timeout=*) limit=${arg#*=} ;;
    --netns=*) netns=${arg#*=}; [ "$network" = lo ] && network=$netns ;;
    --network=*) network=${arg#*=} ;;
    --append) append=1 ;;
    --stats) stats=1 ;;
    *) echo "layer_table.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
bin=bazel-bin
bsprun=$bin/bsplib/bsprun
[ -x "$bsprun" ] && [ -x "$bin/bench/layer_pingpong" ] || { echo "layer_table.sh: build first: bazel build //bench/... //bsplib:bsprun" >&2; exit 1; }
[ -n "$transports" ] || transports=$("$bsprun" --help 2>&1 | sed -n 's/^transports built in: //p' | tr -d ' ')
mkdir -p "$out/logs"
if [ $quick = 1 ]; then repetitions=500 count=5000; else repetitions=5000 count=50000; fi

# Runs a command under the time limit, log in $out/logs/$1.log; prints its stdout.
measure() {
  local log=$out/logs/$1.log
  shift
  timeout "$limit" "$@" 2>"$log"
  local status=$?
  [ $status = 0 ] || echo "layer_table.sh: $* failed (exit $status): $(tail -n 1 "$log")" >&2
  if [ $stats = 1 ]; then grep -E "stats pid|^  (pid|total) " "$log" | sed "s|^|    $(basename "$log" .log): |" >&2; fi
  return $status
}
# The value of NAME=number in text, or "failed".
field() { echo "$2" | sed -n "s/.*$1=\([0-9.]*\).*/\1/p" | head -n 1 | grep . || echo failed; }
# The column named $2 of the CSV text $1's first data row, or "failed".
column() {
  echo "$1" | awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == name) c = i; next } c && NR == 2 { print $c; found = 1 } END { if (!found) print "failed" }'
}

# The bare bandwidth counting only the frames that arrived: $1 MB/s sent, $2 of $count lost.
delivered() { awk -v rate="$1" -v lost="$2" -v count="$count" 'BEGIN { if (rate ~ /^[0-9.]+$/) printf "%.1f", rate * (count - lost) / count; else print "failed" }'; }

csv=$out/layers.csv
header="network,transport,ack_policy,bare_rt_median_us,bare_rt_min_us,reliable_rt_median_us,reliable_rt_min_us,bsp_superstep_median_us,bsp_superstep_min_us,bsp_pingpong_median_us,bare_MBps,bare_lost,reliable_MBps,bsp_MBps,bare_delivered_MBps"
[ $append = 1 ] && [ -s "$csv" ] || echo "$header" >"$csv"
netns_flag=() stats_flag=() bsprun_stats=()
[ -n "$netns" ] && netns_flag=(--netns="$netns")
[ $stats = 1 ] && stats_flag=(--stats) bsprun_stats=(--stats)
for transport in ${transports//,/ }; do
  policy_flag=() policy=-
  if [ "$transport" != tcp ] && [ -n "$ack_policy" ]; then policy_flag=(--ack-policy="$ack_policy"); policy=$ack_policy; fi
  echo "layer_table: $network $transport" >&2
  lp=("$bin/bench/layer_pingpong" --transport="$transport" "${netns_flag[@]}" "${stats_flag[@]}")
  bare=$(measure "layers_${network}_${transport}_bare_rt" "${lp[@]}" --layer=transport --size=4 --repetitions=$repetitions)
  reliable=$(measure "layers_${network}_${transport}_reliable_rt" "${lp[@]}" --layer=channel --size=4 --repetitions=$repetitions)
  bare_bw=$(measure "layers_${network}_${transport}_bare_bw" "${lp[@]}" --layer=transport --test=bandwidth --size=1400 --count=$count)
  bare_lost=$(sed -n 's/.*(\([0-9]*\) lost.*/\1/p' "$out/logs/layers_${network}_${transport}_bare_bw.log" | head -n 1)
  reliable_bw=$(measure "layers_${network}_${transport}_reliable_bw" "${lp[@]}" --layer=channel --test=bandwidth --size=1400 --count=$count)
  bsp=("$bsprun" -n 2 --transport="$transport" "${policy_flag[@]}" "${netns_flag[@]}" "${bsprun_stats[@]}")
  bsp_rt=$(measure "layers_${network}_${transport}_bsp_rt" "${bsp[@]}" "$bin/bench/bsp_roundtrip" --sizes=4 --repetitions=$repetitions)
  bsp_bw=$(measure "layers_${network}_${transport}_bsp_bw" "${bsp[@]}" "$bin/bench/bsp_bandwidth" --sizes=1400 --max-count=$count --repetitions=3)
  echo "$network,$transport,$policy,$(field median "$bare"),$(field min "$bare"),$(field median "$reliable"),$(field min "$reliable"),$(column "$bsp_rt" superstep_median_us),$(column "$bsp_rt" superstep_min_us),$(column "$bsp_rt" round_trip_median_us),$(field bandwidth_MBps "$bare_bw"),${bare_lost:-0},$(field bandwidth_MBps "$reliable_bw"),$(column "$bsp_bw" best_MBps),$(delivered "$(field bandwidth_MBps "$bare_bw")" "${bare_lost:-0}")" >>"$csv"
done

# The table: values, and each layer's cost over the one below it.
awk -F, -v network="$network" '
  function added(upper, lower) { return (upper ~ /^[0-9.]+$/ && lower ~ /^[0-9.]+$/) ? sprintf("%+.1f", upper - lower) : "n/a" }
  function row(a, b, c, d, e, f, g, h, i, j, k) { printf "%-5s %-6s | %9s %9s %9s %9s | %9s %9s | %9s %9s %9s\n", a, b, c, d, e, f, g, h, i, j, k }
  NR == 1 || $1 != network { next }
  {
    $0 = substr($0, index($0, ",") + 1)  # drop the network column
    if (!printed++) {
      print "Per-layer cost on " network ": medians of the 4-byte round trip (µs) and 1400-byte one-way bandwidth (MB/s)"
      row("", "", "------", "4-byte round", "trip, µs", "------", "added,", "µs", "-- 1400-B", "bandwidth,", "MB/s --")
      row("", "ack", "bare", "reliable", "superstep", "BSP pp", "reliable", "BSP pp", "bare", "reliable", "BSPlib")
    }
    row($1, $2, $3, $5, $7, $9, added($5, $3), added($9, $5), $14, $12, $13)
    if ($11 > 0) lost = lost sprintf("  %s: the bare transport lost %s of the 1400-byte frames (no recovery at that layer); its column counts those that arrived, %s MB/s were sent\n", $1, $11, $10)
  }
  END {
    print "  bare = frames through the transport; reliable = through the reliable channel (bench/layer_pingpong);"
    print "  superstep = one 4-byte bsp_put + bsp_sync at p = 2 (both directions exchange once per sync);"
    print "  BSP pp = put ping-pong: pid 0 puts + sync, pid 1 puts back + sync (4 bytes there and back, as bare)."
    printf "%s", lost
  }' "$csv"
echo "(saved in $csv)"
