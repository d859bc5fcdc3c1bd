#!/bin/bash
# bench/plot_all.sh: the PNG plots of every results CSV in a directory (default
# results/bench), one set per network (lo, cluster, shaped), with bench/plot.sh:
#   roundtrip_min_NET.png, roundtrip_median_NET.png   Fig. 1: round trip against size
#   bandwidth_NET.png                                  Fig. 2: bandwidth against size
#   spray_4_NET.png, spray_1400_NET.png                Figs. 3, 4: µs per message against i
#   params_hrel_pP_NET.png                             h-relation time against h, for p = P
#   layers_NET.png                                     per-layer round trip and bandwidth
# Run from the workspace: bench/plot_all.sh [DIR]
# --help prints the comment above.
case " $* " in *" --help "* | *" -h "*) sed -n '2,/^[^#]/p' "$0" | sed '/^[^#]/d; s/^# \{0,1\}//'; exit 0 ;; esac
set -u
cd "$(dirname "$0")/.."
dir=${1:-results/bench}
plot=bench/plot.sh
networks_in() { [ -s "$1" ] && awk -F, 'NR > 1 && !seen[$1]++ { print $1 }' "$1"; }
made=0
try() { "$plot" "$@" && made=$((made + 1)); }

for net in $(networks_in "$dir/roundtrip.csv"); do
  try "$dir/roundtrip.csv" "$dir/roundtrip_min_$net.png" "Round trip, minimum (put ping-pong, p=2, $net)" size round_trip_min_us \
    transport,ack_policy --where network="$net" --logx --logy --xlabel "message size (bytes)" --ylabel "round trip (µs)"
  try "$dir/roundtrip.csv" "$dir/roundtrip_median_$net.png" "Round trip, median (put ping-pong, p=2, $net)" size round_trip_median_us \
    transport,ack_policy --where network="$net" --logx --logy --xlabel "message size (bytes)" --ylabel "round trip (µs)"
done
for net in $(networks_in "$dir/bandwidth.csv"); do
  try "$dir/bandwidth.csv" "$dir/bandwidth_$net.png" "Bandwidth, best (many bsp_puts, one reply; p=2, $net)" size best_MBps \
    transport,ack_policy --where network="$net" --logx --xlabel "message size (bytes)" --ylabel "bandwidth (MB/s)"
done
for net in $(networks_in "$dir/spray.csv"); do
  for size in $(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "size") c = i; next } !seen[$c]++ { print $c }' "$dir/spray.csv"); do
    try "$dir/spray.csv" "$dir/spray_${size}_$net.png" "Spray latency, $size-byte messages (median time / i; p=2, $net)" i \
      median_us_per_message transport,ack_policy,via --where network="$net" --where size="$size" --logx --logy \
      --xlabel "messages in flight i" --ylabel "time per message (µs)"
  done
done
for net in $(networks_in "$dir/params_hrel.csv"); do
  for p in $(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "p") c = i; next } !seen[$c]++ { print $c }' "$dir/params_hrel.csv"); do
    try "$dir/params_hrel.csv" "$dir/params_hrel_p${p}_$net.png" "h-relations of single-double puts (p=$p, $net)" h time_us \
      transport,ack_policy --where network="$net" --where p="$p" --xlabel "h (8-byte words sent and received per process)" \
      --ylabel "time of one h-relation (µs)"
  done
done
for net in $(networks_in "$dir/layers.csv"); do
  command -v gnuplot >/dev/null || break
  rows=$(mktemp)
  awk -F, -v net="$net" 'NR == 1 || $1 == net' "$dir/layers.csv" >"$rows"
  # Clustered bars: for each transport, the round trip and the bandwidth of each layer.
  gnuplot <<GNUPLOT && made=$((made + 1))
set terminal pngcairo size 1000,500 font "sans,11" noenhanced
set output "$dir/layers_$net.png"
set datafile separator ","
set datafile missing "failed"
set multiplot layout 1,2 title "Per-layer cost, $net (medians)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key outside bottom center horizontal autotitle columnhead
set yrange [0:*]
set grid ytics
set title "4-byte round trip (µs)"
plot "$rows" using 4:xtic(2) title "bare", "" using 6 title "reliable", "" using 10 title "BSPlib put ping-pong"
set title "1400-byte bandwidth (MB/s)"
plot "$rows" using 15:xtic(2) title "bare (delivered)", "" using 13 title "reliable", "" using 14 title "BSPlib"
unset multiplot
GNUPLOT
  rm -f "$rows"
done
echo "plot_all.sh: $made plots in $dir" >&2
