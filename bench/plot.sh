#!/bin/sh
# bench/plot.sh: one gnuplot PNG from one results CSV (header row, comma-separated): a
# line per series (rows with equal values in the key columns), x and y named by column,
# optionally only the rows where a column has a given value. Used by bench/run_all.sh.
#   bench/plot.sh CSV PNG TITLE X_COLUMN Y_COLUMN KEY_COLUMNS [--logx] [--logy]
#                 [--where COLUMN=VALUE]... [--xlabel TEXT] [--ylabel TEXT]
#   e.g. bench/plot.sh results/bench/roundtrip.csv roundtrip.png "Round trip" size \
#          round_trip_min_us network,transport,ack_policy --logx --ylabel "µs"
# --help prints the comment above.
case " $* " in *" --help "* | *" -h "*) sed -n '2,/^[^#]/p' "$0" | sed '/^[^#]/d; s/^# \{0,1\}//'; exit 0 ;; esac
set -eu
csv=$1 png=$2 title=$3 x=$4 y=$5 keys=$6
shift 6
logx="" logy="" where="" xlabel=$x ylabel=$y
while [ $# -gt 0 ]; do
  case "$1" in
    --logx) logx="set logscale x 2; set format x '%.0f'"; shift ;;
    --logy) logy="set logscale y"; shift ;;
    --where) where="$where${where:+;}$2"; shift 2 ;;
    --xlabel) xlabel=$2; shift 2 ;;
    --ylabel) ylabel=$2; shift 2 ;;
    *) echo "plot.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
command -v gnuplot >/dev/null || { echo "plot.sh: gnuplot not found (tools/setup.sh installs it)" >&2; exit 1; }
[ -s "$csv" ] || { echo "plot.sh: no data in $csv" >&2; exit 1; }
series=$(mktemp -d)
trap 'rm -rf "$series"' EXIT

# Split the rows into one "x y" file per series; list the series as "file<TAB>title".
awk -F, -v x="$x" -v y="$y" -v keys="$keys" -v where="$where" -v dir="$series" '
  NR == 1 {
    for (i = 1; i <= NF; ++i) column[$i] = i
    if (!(x in column) || !(y in column)) { print "plot.sh: no column " x " or " y > "/dev/stderr"; exit 1 }
    nkeys = split(keys, key, ",")
    nwhere = split(where, condition, ";")
    for (c = 1; c <= nwhere; ++c) {
      eq = index(condition[c], "=")
      wcol[c] = substr(condition[c], 1, eq - 1); wval[c] = substr(condition[c], eq + 1)
      if (!(wcol[c] in column)) { print "plot.sh: no column " wcol[c] > "/dev/stderr"; exit 1 }
    }
    next
  }
  {
    for (c = 1; c <= nwhere; ++c) if ($column[wcol[c]] != wval[c]) next
    name = ""
    for (k = 1; k <= nkeys; ++k) if (key[k] in column && $column[key[k]] != "" && $column[key[k]] != "-") name = name (name == "" ? "" : " ") $column[key[k]]
    if (!(name in file)) { file[name] = dir "/" (++count) ".dat"; printf "%s\t%s\n", file[name], name > (dir "/list") }
    print $column[x], $column[y] > file[name]
  }' "$csv"
[ -s "$series/list" ] || { echo "plot.sh: no rows to plot in $csv${where:+ where $where}" >&2; exit 1; }

plots=$(awk -F'\t' '{ printf "%s\"%s\" using 1:2 with linespoints lw 2 ps 0.8 title \"%s\"", (NR > 1 ? ", " : ""), $1, $2 }' "$series/list")
gnuplot <<GNUPLOT
set terminal pngcairo size 1000,650 font "sans,11" noenhanced
set output "$png"
set title "$title"
set xlabel "$xlabel"
set ylabel "$ylabel"
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set key outside right top
$logx
$logy
plot $plots
GNUPLOT
