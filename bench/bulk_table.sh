#!/bin/sh
# bench/bulk_table.sh: the large-transfer table in one run: the bare floors of each transport (a
# TCP stream of 64 KiB writes, with and without MSG_ZEROCOPY; the best udp and nic streams
# of our bare transports, delivered bytes only; bare raw frames on lo of 65535 and 1500
# bytes, bench/raw_frame_floor), next to what BSPlib does with them at
# p = 2: one 8 MiB bsp_put (and bsp_hpput, bsp_get) per superstep (best / median GB/s) and g by bspbench's method
# (ns per 8-byte word). With --before=DIR (a directory holding bsprun, bench/ and nas/ of
# an earlier build, e.g. copied from bazel-bin) every BSPlib figure is measured for both
# builds, interleaved; --nas adds NAS CG, IS and FT class A at p = 4 on every transport
# (best of --nas-runs, seconds), before and after; --shaped (root) adds one 1400-byte put
# stream at p = 2 over a two-host namespace cluster at 100 Mbit/s (tools/cluster.sh, torn
# down after) for the network transports: MB/s and the share of the 12.5 MB/s wire;
# --cluster (root) adds the bare UDP stream of 1472-byte datagrams (one per send, and
# segmented + coalesced) and one 8 MiB put at p = 2 between two unshaped hosts of
# tools/cluster.sh (veth MTU 1500). The udp floors are bench/udp_stream_floor's bare
# streams on lo (65,000-byte datagrams, the largest the row's frames use; 1472-byte).
# Prints markdown.
# Run from the workspace root after
#   bazel build //bench/... //nas/... //bsplib:bsprun
# Usage: bench/bulk_table.sh [--before=DIR] [--transports=tcp,udp,nic,shm] [--nas] [--nas-runs=3] [--shaped]
#        [--cluster]
# --help prints the comment above.
case " $* " in *" --help "* | *" -h "*) sed -n '2,/^[^#]/p' "$0" | sed '/^[^#]/d; s/^# \{0,1\}//'; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
before=""
transports="tcp,udp,nic,shm"
nas=0
nas_runs=3
shaped=0
cluster=0
for arg in "$@"; do
  case $arg in
    --before=*) before=${arg#*=} ;;
    --transports=*) transports=${arg#*=} ;;
    --nas) nas=1 ;;
    --nas-runs=*) nas_runs=${arg#*=} ;;
    --shaped) shaped=1 ;;
    --cluster) cluster=1 ;;
    *) echo "usage: bench/bulk_table.sh [--before=DIR] [--transports=LIST] [--nas] [--nas-runs=N] [--shaped] [--cluster]" >&2; exit 2 ;;
  esac
done
after=bazel-bin
builds="$after"
[ -n "$before" ] && builds="$before $after"
list=$(echo "$transports" | tr ',' ' ')

# The launcher of a build: bazel-bin/bsplib/bsprun, or DIR/bsprun for a copied one.
bsprun_of() { if [ "$1" = bazel-bin ]; then echo "$1/bsplib/bsprun"; else echo "$1/bsprun"; fi; }
# One 8 MiB put (or hpput, or get: $via) per superstep at p=2: "best / median" GB/s.
via=put
put_8mib() {  # build transport
  "$(bsprun_of "$1")" -n 2 --transport="$2" "$1/bench/bsp_bandwidth" --sizes=8388608 --bytes=8388608 \
      --repetitions=20 --via="$via" 2>/dev/null | awk -F, '$3 == 8388608 {printf "%.2f / %.2f", $6 / 1000, $7 / 1000}'
}
# g at p=2 in ns per word (bspbench's fit over h = 0..2048).
g_ns() {  # build transport
  "$(bsprun_of "$1")" -n 2 --transport="$2" "$1/bench/bsp_params" --h-max=2048 --iterations=10 2>/dev/null |
    awk -F, 'NF == 9 && $2 == 2 {printf "%.0f", $6 * 1000}'
}
# The best delivered MB/s of our bare transport over frame sizes (layer_pingpong).
bare_stream() {  # transport sizes...
  t=$1
  shift
  best=0
  for size in "$@"; do
    rate=$(bazel-bin/bench/layer_pingpong --transport="$t" --layer=transport --test=bandwidth --size="$size" \
        --count=20000 --batch=32 2>/dev/null |
      sed -n 's/.*delivered_MBps=\([0-9.]*\).*/\1/p; t; s/.*bandwidth_MBps=\([0-9.]*\).*/\1/p' | tail -1)
    best=$(awk -v a="$best" -v b="${rate:-0}" 'BEGIN {print (b > a) ? b : a}')
  done
  awk -v r="$best" 'BEGIN {printf "%.2f", r / 1000}'
}

echo "Floors (same run):"
echo
echo "| floor | GB/s best / median |"
echo "|---|---|"
for z in 0 1; do
  bazel-bin/bench/tcp_stream_floor --csv=1 --zerocopy=$z |
    awk -F, -v z=$z '{printf "| bare TCP stream on lo, 64 KiB writes%s | %.2f / %.2f |\n", z ? ", MSG_ZEROCOPY" : "", $4, $5}'
done
# The bare UDP stream (bench/udp_stream_floor): "best / median" GB/s delivered.
udp_floor() {  # udp_stream_floor options...
  bazel-bin/bench/udp_stream_floor --csv=1 --repetitions=5 "$@" | awk -F, '{printf "%.2f / %.2f", $5, $6}'
}
case ",$transports," in *,udp,*)
  echo "| bare UDP stream on lo, 65,000-byte datagrams (sendmmsg / recvmmsg) | $(udp_floor --size=65000) |"
  echo "| bare UDP stream on lo, 1472-byte datagrams | $(udp_floor --size=1472) |"
  echo "| our bare udp transport, best delivered stream (8 KiB .. 64 KiB frames) | $(bare_stream udp 8192 16384 65000) |" ;;
esac
if [ "$cluster" = 1 ]; then
  tools/cluster.sh up 2 --prefix bc >/dev/null
  trap 'tools/cluster.sh down --prefix bc >/dev/null 2>&1' EXIT
  echo "| bare UDP stream between two emulated hosts (veth, MTU 1500), 1472-byte datagrams | $(udp_floor --netns=bc --size=1472 --total=67108864) |"
  echo "| the same, segmented and coalesced (UDP_SEGMENT, UDP_GRO) | $(udp_floor --netns=bc --size=1472 --total=67108864 --gso=1 --gro=1) |"
fi
case ",$transports," in *,nic,*)
  echo "| our bare nic transport on lo, best delivered stream (8 KiB .. 64 KiB frames) | $(bare_stream nic 8192 16384 65000) |"
  # The bare raw-frame stream (AF_PACKET, no reliable layer): the largest frame lo allows
  # (nic's default there) and Ethernet's 1500 bytes, received from a ring as nic does.
  for m in 65535 1500; do
    bazel-bin/bench/raw_frame_floor --mtu=$m --csv=1 2>/dev/null |
      awk -F, '{printf "| bare raw frames on lo, %s bytes each, ring receiver | %.2f / %.2f |\n", $2, $4, $5}'
  done ;;
esac
echo

header="| figure, p = 2 |"
rule="|---|"
for t in $list; do
  for b in $builds; do
    if [ "$b" = "$after" ] && [ -n "$before" ]; then header="$header $t after |"; elif [ -n "$before" ]; then header="$header $t before |"; else header="$header $t |"; fi
    rule="$rule---|"
  done
done
echo "$header"
echo "$rule"
# One table row: label, then what `$2 BUILD TRANSPORT` prints for each transport and build.
figure_row() {  # label function
  row="| $1 |"
  for t in $list; do
    for b in $builds; do
      row="$row $("$2" "$b" "$t") |"
    done
  done
  echo "$row"
}
figure_row "one 8 MiB bsp_put, GB/s best / median" put_8mib
via=hpput
figure_row "one 8 MiB bsp_hpput, GB/s best / median" put_8mib
via=get
figure_row "one 8 MiB bsp_get, GB/s best / median" put_8mib
figure_row "g, ns per 8-byte word (bsp_params)" g_ns
# nic with Ethernet's frames on lo (--mtu=1500), against the bare 1500-byte raw frames above.
put_8mib_1500() {  # build transport
  case $2 in nic) ;; *) echo "-"; return ;; esac
  "$(bsprun_of "$1")" -n 2 --transport=nic --mtu=1500 "$1/bench/bsp_bandwidth" --sizes=8388608 --bytes=8388608 \
      --repetitions=20 --via=put 2>/dev/null | awk -F, '$3 == 8388608 {printf "%.2f / %.2f", $6 / 1000, $7 / 1000}'
}
via=put
case ",$transports," in *,nic,*) figure_row "one 8 MiB bsp_put with 1500-byte frames (nic --mtu=1500), GB/s" put_8mib_1500 ;; esac

# One 1400-byte put stream (16 MiB) at p = 2 over the shaped two-host cluster: "MB/s (share
# of the 12.5 MB/s wire)"; shm has no wire.
stream_1400() {  # build transport
  case $2 in shm | shm+*) echo "-"; return ;; esac
  "$(bsprun_of "$1")" -n 2 --netns=bt --transport="$2" "$1/bench/bsp_bandwidth" --sizes=1400 --repetitions=3 2>/dev/null |
    awk -F, '$3 == 1400 {printf "%.2f (%.1f%%)", $6, $6 / 12.5 * 100}'
}
# One 8 MiB put at p = 2 between two unshaped emulated hosts (MTU 1500): "best / median" GB/s.
put_cluster() {  # build transport
  case $2 in shm | shm+*) echo "-"; return ;; esac
  "$(bsprun_of "$1")" -n 2 --netns=bc --transport="$2" "$1/bench/bsp_bandwidth" --sizes=8388608 --bytes=8388608 \
      --repetitions=10 2>/dev/null | awk -F, '$3 == 8388608 {printf "%.2f / %.2f", $6 / 1000, $7 / 1000}'
}
if [ "$cluster" = 1 ]; then
  figure_row "one 8 MiB bsp_put between two hosts, MTU 1500, GB/s best / median" put_cluster
  tools/cluster.sh down --prefix bc >/dev/null 2>&1
  trap - EXIT
fi
if [ "$shaped" = 1 ]; then
  tools/cluster.sh up 2 --prefix bt --rate 100mbit --queue 15000 >/dev/null
  trap 'tools/cluster.sh down --prefix bt >/dev/null 2>&1' EXIT
  figure_row "1400-byte put stream over 100 Mbit/s, MB/s (share of the wire)" stream_1400
fi

[ "$nas" = 1 ] || exit 0
# NAS $bench class A at p = 4: the best time of nas_runs runs, seconds.
nas_best() {  # build transport
  best=""
  i=0
  while [ $i -lt "$nas_runs" ]; do
    binary="$1/nas/$bench/$bench"
    [ -x "$binary" ] || binary="$1/nas/$bench"  # a build from before each benchmark had its package
    s=$("$(bsprun_of "$1")" -n 4 --transport="$2" "$binary" --class=A 2>/dev/null | awk '/Time in seconds/ {print $5}')
    best=$(awk -v a="$best" -v b="$s" 'BEGIN {if (a == "" || (b != "" && b + 0 < a + 0)) print b; else print a}')
    i=$((i + 1))
  done
  echo "${best:-n/a}"
}
echo
echo "NAS class A, p = 4, seconds (best of $nas_runs; each build's runs back to back):"
echo
echo "$header" | sed 's/figure, p = 2/benchmark/'
echo "$rule"
for bench in cg is ft; do
  figure_row "$(echo $bench | tr a-z A-Z)" nas_best
done
