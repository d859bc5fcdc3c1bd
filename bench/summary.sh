#!/bin/bash
# bench/summary.sh: the headline numbers of a results directory (default results/bench)
# as text: 4-byte and 64 KiB round trips, 1400-byte and best bandwidth, the spray's
# largest i reached (also saved as spray_reached.csv) and time per message there, the
# fitted BSP parameters, and the runs that failed. Run: bench/summary.sh [DIR]
# --help prints the comment above.
case " $* " in *" --help "* | *" -h "*) sed -n '2,/^[^#]/p' "$0" | sed '/^[^#]/d; s/^# \{0,1\}//'; exit 0 ;; esac
set -u
cd "$(dirname "$0")/.."
dir=${1:-results/bench}

# Prints CSV $1 rows as a table of the named columns ($2: comma list), filtered by awk
# condition $3 on the column values (as c["name"]).
table() {
  [ -s "$1" ] || return 0
  awk -F, -v want="$2" -v filter="$3" '
    NR == 1 { for (i = 1; i <= NF; ++i) index_of[$i] = i; n = split(want, name, ",")
              print want; next }
    {
      for (k in index_of) c[k] = $index_of[k]
      split(filter, f, "=")
      if (filter != "" && c[f[1]] != f[2]) next
      line = ""; for (k = 1; k <= n; ++k) line = line (k > 1 ? "," : "") c[name[k]]; print line
    }' "$1" | column -t -s, | sed 's/^/  /'
}

if [ -s "$dir/roundtrip.csv" ]; then
  echo "Round trip, 4 bytes (put ping-pong at p=2, µs):"
  table "$dir/roundtrip.csv" network,transport,ack_policy,round_trip_min_us,round_trip_median_us,superstep_median_us size=4
  echo
fi
if [ -s "$dir/bandwidth.csv" ]; then
  echo "Bandwidth, 1400-byte puts (MB/s):"
  table "$dir/bandwidth.csv" network,transport,ack_policy,count,best_MBps,median_MBps size=1400
  echo
fi
if [ -s "$dir/spray.csv" ]; then
  # The largest i each configuration completed, and its time per message there.
  awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
    { key = $c["network"] "," $c["transport"] "," $c["ack_policy"] "," $c["via"] "," $c["size"]
      if (!(key in reached) || $c["i"] + 0 > reached[key] + 0) { reached[key] = $c["i"]; at[key] = $c["median_us_per_message"] } }
    END { print "network,transport,ack_policy,via,size,largest_i,median_us_per_message_there"
          for (key in reached) print key "," reached[key] "," at[key] }' "$dir/spray.csv" \
    | { read -r header; echo "$header"; sort; } >"$dir/spray_reached.csv"
  echo "Spray: largest i reached without loss, and µs per message there:"
  table "$dir/spray_reached.csv" network,transport,ack_policy,via,size,largest_i,median_us_per_message_there ""
  echo
fi
if [ -s "$dir/params.csv" ]; then
  echo "BSP parameters (bspbench method; g per 8-byte word, fit over h = p .. h_max):"
  table "$dir/params.csv" network,transport,ack_policy,p,r_mflops,g_flops_per_word,l_flops,g_us_per_word,l_us ""
  echo
fi
if [ -s "$dir/failures.csv" ] && [ "$(wc -l <"$dir/failures.csv")" -gt 1 ]; then
  echo "Runs that failed (logs in $dir/logs):"
  tail -n +2 "$dir/failures.csv" | sed 's/^/  /'
else
  echo "No run failed."
fi
