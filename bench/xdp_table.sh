#!/bin/bash
# bench/xdp_table.sh: the xdp transport beside nic and udp, and their bare floors, in one
# run on the emulated cluster (tools/cluster.sh; root): the 4-byte round trip at p = 2
# across two hosts (bare transport and BSPlib), a 1400-byte stream between two hosts in
# frames per second (bare, and bsp_put), one 8 MiB put, the empty superstep at p = 8
# (8 hosts x 1: xdp takes one process per interface queue, and the cluster's veth
# interfaces have one), and a 1400-byte stream over the cluster shaped to 100 Mbit/s
# (xdp's frames skip the host's token bucket; the switch ports still shape them), and
# again with every host's traffic shaped where it enters the switch as well. The
# transports take turns, round after round (--rounds, default 3), so the machine's load
# falls on all alike; each figure is the median over the rounds. A transport may carry
# settings after a dash: "xdp-skb" and "xdp-native" run xdp's program generically or in
# the driver (--xdp-mode; plain "xdp" takes the default), "xdp-nobusy" without busy
# polling (--busy-poll-us=0), "xdp-skb-nobusy" both. --figures=targets measures only the
# four figures with targets (BSPlib round trip, 1400-byte stream, 8 MiB put, p = 8
# superstep) and skips the shaped clusters. table.md also gives the machine's load
# (1-minute average) before and after.
#   bench/xdp_table.sh [--rounds=3] [--transports=xdp,xdp-skb,nic,udp] [--figures=all|targets]
#                      [--out=results/xdp]
# --help prints the comment above.
case " $* " in *" --help "* | *" -h "*) sed -n '2,/^[^#]/p' "$0" | sed '/^[^#]/d; s/^# \{0,1\}//'; exit 0 ;; esac
set -eu
rounds=3 transports="xdp,xdp-skb,nic,udp" out=results/xdp figures=all
for arg in "$@"; do
  case "$arg" in
    --rounds=*) rounds=${arg#*=} ;;
    --transports=*) transports=${arg#*=} ;;
    --figures=*) figures=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    *) echo "usage: bench/xdp_table.sh [--rounds=N] [--transports=a,b] [--figures=all|targets] [--out=DIR]" >&2
      exit 2 ;;
  esac
done
case "$figures" in all | targets) ;; *) echo "xdp_table: --figures=all or targets" >&2; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "xdp_table: needs root (namespaces, XDP)" >&2; exit 3; }
bazel build //bench:layer_pingpong //bench:bsp_roundtrip //bench:bsp_bandwidth //bench:sync_time //bsplib:bsprun >/dev/null 2>&1
bin=bazel-bin
mkdir -p "$out"
raw="$out/raw.csv"
echo "round,transport,metric,value" >"$raw"
prefix=xt$$
shaped=xs$$ ingress=xi$$
trap 'for p in $prefix $shaped $ingress; do tools/cluster.sh down --prefix $p >/dev/null 2>&1; done' EXIT
load_before=$(cut -d' ' -f1 /proc/loadavg)
tools/cluster.sh up 8 --prefix "$prefix" >/dev/null
if [ "$figures" = all ]; then
  tools/cluster.sh up 2 --prefix "$shaped" --rate 100mbit --queue 15000 >/dev/null
  tools/cluster.sh up 2 --prefix "$ingress" --rate 100mbit --queue 15000 --ingress-shaper >/dev/null
fi
bsprun() { timeout 300 "$bin/bsplib/bsprun" "$@"; }
record() { echo "$1,$variant,$3,${4:-}" >>"$raw"; }

for round in $(seq 1 "$rounds"); do
  for variant in ${transports//,/ }; do
    t=${variant%%-*}
    unset BSP_XDP_MODE BSP_BUSY_POLL_US
    case "-${variant#"$t"}-" in *-skb-*) export BSP_XDP_MODE=skb ;; *-native-*) export BSP_XDP_MODE=native ;; esac
    case "-${variant#"$t"}-" in *-nobusy-*) export BSP_BUSY_POLL_US=0 ;; esac
    if [ "$figures" = all ]; then
      # Bare transport, 4-byte ping-pong: "round_trip_us median=M min=N".
      line=$(timeout 120 "$bin/bench/layer_pingpong" --transport="$t" --layer=transport --netns="$prefix" --size=4 \
        --repetitions=20000 2>/dev/null | tail -1)
      record "$round" "$t" bare_rtt_median_us "$(sed -n 's/.*median=\([0-9.]*\).*/\1/p' <<<"$line")"
      record "$round" "$t" bare_rtt_min_us "$(sed -n 's/.*min=\([0-9.]*\).*/\1/p' <<<"$line")"
    fi
    # BSPlib round trip (a 4-byte put each way, p = 2): min and median.
    line=$(bsprun -n 2 --netns="$prefix" --transport="$t" "$bin/bench/bsp_roundtrip" --sizes=4 --repetitions=5000 \
      2>/dev/null | grep "^$t,")
    record "$round" "$t" bsp_rtt_min_us "$(cut -d, -f5 <<<"$line")"
    record "$round" "$t" bsp_rtt_median_us "$(cut -d, -f6 <<<"$line")"
    if [ "$figures" = all ]; then
      # Bare 1400-byte stream: frames delivered per second.
      line=$(timeout 120 "$bin/bench/layer_pingpong" --transport="$t" --layer=transport --netns="$prefix" \
        --test=bandwidth --size=1400 --count=200000 2>/dev/null | tail -1)
      mbps=$(sed -n 's/.*delivered_MBps=\([0-9.]*\).*/\1/p' <<<"$line")
      record "$round" "$t" bare_stream_kfps "$(awk -v m="$mbps" 'BEGIN { if (m != "") printf "%.1f", m * 1e3 / 1400 }')"
    fi
    # bsp_put stream of 1400-byte messages (16 MiB), median of 3: frames per second.
    line=$(bsprun -n 2 --netns="$prefix" --transport="$t" "$bin/bench/bsp_bandwidth" --sizes=1400 --repetitions=3 \
      2>/dev/null | grep "^$t,")
    mbps=$(cut -d, -f7 <<<"$line")
    record "$round" "$t" bsp_stream_kfps "$(awk -v m="$mbps" 'BEGIN { if (m != "") printf "%.1f", m * 1e3 / 1400 }')"
    # One 8 MiB put, median of 5: MB/s.
    line=$(bsprun -n 2 --netns="$prefix" --transport="$t" "$bin/bench/bsp_bandwidth" --sizes=8388608 --repetitions=5 \
      2>/dev/null | grep "^$t,")
    record "$round" "$t" put_8mib_MBps "$(cut -d, -f7 <<<"$line")"
    # Empty superstep at p = 8, one process per host.
    line=$(bsprun -n 8 --netns="$prefix" --transport="$t" "$bin/bench/sync_time" 5000 2>/dev/null |
      grep "no communication")
    record "$round" "$t" empty_sync_p8_median_us "$(awk '{ print $5 }' <<<"$line")"
    [ "$figures" = all ] || continue
    # 1400-byte stream over the shaped cluster (100 Mbit/s): MB/s and resent frames.
    result=$(bsprun -n 2 --netns="$shaped" --transport="$t" --stats "$bin/bench/bsp_bandwidth" --sizes=1400 \
      --repetitions=3 2>&1)
    record "$round" "$t" shaped_stream_MBps "$(grep "^$t," <<<"$result" | cut -d, -f7)"
    record "$round" "$t" shaped_retransmissions "$(grep -o 'total .*' <<<"$result" | grep -o ' retransmissions=[0-9]*' |
      cut -d= -f2)"
    # The same with each host's traffic shaped again where it enters the switch (an IFB
    # device: tools/cluster.sh --ingress-shaper), which AF_XDP's sends cannot bypass.
    result=$(bsprun -n 2 --netns="$ingress" --transport="$t" --stats "$bin/bench/bsp_bandwidth" --sizes=1400 \
      --repetitions=3 2>&1)
    record "$round" "$t" ingress_stream_MBps "$(grep "^$t," <<<"$result" | cut -d, -f7)"
    record "$round" "$t" ingress_retransmissions "$(grep -o 'total .*' <<<"$result" | grep -o ' retransmissions=[0-9]*' |
      cut -d= -f2)"
  done
done

load_after=$(cut -d' ' -f1 /proc/loadavg)
# The median over the rounds of each (transport, metric).
python3 - "$raw" "$out/table.md" "$transports" "$load_before" "$load_after" "$(nproc)" <<'PY'
import csv, statistics, sys
raw, table, transports = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
load = f"load average {sys.argv[4]} before, {sys.argv[5]} after, on {sys.argv[6]} cores"

values = {}
for row in csv.DictReader(open(raw)):
    if row["value"]:
        values.setdefault((row["transport"], row["metric"]), []).append(float(row["value"]))
metrics = [("bare_rtt_min_us", "bare round trip, 4 B, min (us)"), ("bare_rtt_median_us", "bare round trip, 4 B, median (us)"),
           ("bsp_rtt_min_us", "BSPlib round trip, 4-byte put, p = 2, min (us)"),
           ("bsp_rtt_median_us", "BSPlib round trip, 4-byte put, p = 2, median (us)"),
           ("bare_stream_kfps", "bare 1400-byte stream (k frames/s)"),
           ("bsp_stream_kfps", "bsp_put 1400-byte stream (k frames/s)"), ("put_8mib_MBps", "one 8 MiB put (MB/s)"),
           ("empty_sync_p8_median_us", "empty superstep, p = 8 over 8 hosts, median (us)"),
           ("shaped_stream_MBps", "1400-byte stream, 100 Mbit/s links (MB/s)"),
           ("shaped_retransmissions", "... frames resent in it"),
           ("ingress_stream_MBps", "1400-byte stream, 100 Mbit/s, shaped at the switch's ingress too (MB/s)"),
           ("ingress_retransmissions", "... frames resent in it")]
with open(table, "w") as out:
    out.write("| figure (median of rounds) | " + " | ".join(transports) + " |\n")
    out.write("|---|" + "---|" * len(transports) + "\n")
    for key, name in metrics:
        cells = []
        for t in transports:
            v = values.get((t, key))
            cells.append(f"{statistics.median(v):.4g} ({len(v)})" if v else "—")
        if any(c != "—" for c in cells):
            out.write(f"| {name} | " + " | ".join(cells) + " |\n")
    out.write(f"\n(median (rounds); {load})\n")
print(open(table).read())
PY
