#!/bin/sh
# bench/shm_table.sh: the shm transport's table in one run: the bare floors of this machine
# (memcpy bandwidth, a shared-memory ping-pong, the cost of waking a process by futex and
# by pipe; bench/shm_floors) next to what BSPlib over shm does (empty bsp_sync and a
# 4-byte put superstep at p = 2 and 4, one 8 MiB bsp_put at p = 2; 8 MiB put, hp-put and
# get from ordinary (4 KiB) and huge pages, single copies against two, next to a memcpy of
# the same buffers), with nic on lo beside it. Prints a markdown table. Run from the
# workspace root after
#   bazel build -c opt //bench:shm_floors //bench:sync_time //bench:bsp_bandwidth //bsplib:bsprun
# Usage: bench/shm_table.sh [--repetitions=N] [--bulk]
#   --repetitions=N  supersteps per sync figure, default 20000
#   --bulk           only the 8 MiB rows against a memcpy of the same buffers
# --help prints the comment above.
case " $* " in *" --help "* | *" -h "*) sed -n '2,/^[^#]/p' "$0" | sed '/^[^#]/d; s/^# \{0,1\}//'; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
reps=20000
bulk_only=no
for arg in "$@"; do
  case $arg in
    --repetitions=*) reps=${arg#*=} ;;
    --bulk) bulk_only=yes ;;
    *) echo "usage: bench/shm_table.sh [--repetitions=N] [--bulk]" >&2; exit 2 ;;
  esac
done
bin=bazel-bin
bsprun=$bin/bsplib/bsprun

floors=$($bin/bench/shm_floors --csv)
sync_row() {  # transport procs -> "empty_median empty_min put_median put_min"
  $bsprun -n "$2" --transport="$1" $bin/bench/sync_time "$reps" 2>&1 |
    awk '/no communication/ {e=$5" / "$8} /4-byte/ {p=$6" / "$9} END {print e "|" p}'
}
bandwidth() {  # transport [via] [bsprun options] -> best / median GB/s of one 8 MiB transfer per superstep
  $bsprun -n 2 --transport="$1" ${3:-} $bin/bench/bsp_bandwidth --sizes=8388608 --bytes=8388608 --repetitions=20 \
      --via="${2:-put}" 2>&1 |
    awk -F, '$3 == 8388608 {printf "%.2f / %.2f", $6 / 1000, $7 / 1000}'
}
# 8 MiB put, hp-put and get against a memcpy between the same two buffers in the same run
# (bsp_bandwidth --floor): on ordinary pages (a user's malloc'd buffers), and on transparent
# huge pages, where puts, hp-puts and gets are single copies (the receiver reads the
# sender's memory; transport/shm/cross_memory.h, moved_sources.h; ordinary pages sent
# again are moved onto huge pages first).
same_buffers() {  # [--huge] [bsprun options] -> "put | hpput | get | memcpy" as best / median GB/s
  $bsprun -n 2 --transport=shm ${2:-} $bin/bench/bsp_bandwidth --sizes=8388608 --bytes=8388608 --repetitions=20 \
      --via=all --floor ${1:-} 2>&1 |
    awk -F, '$3 == 8388608 {r[$8] = sprintf("%.2f / %.2f", $6 / 1000, $7 / 1000)}
             END {print r["put"] "|" r["hpput"] "|" r["get"] "|" r["memcpy"]}'
}
bulk_rows() {
  small=$(same_buffers)
  huge=$(same_buffers --huge)
  two=$(same_buffers --huge --shm-single-copy=off)
  echo "| 4 KiB pages: p=2 one 8 MiB bsp_put (moved aside once the source is on huge pages: one copy) | $(echo "$small" | cut -d'|' -f1) | | memcpy of the same buffers $(echo "$small" | cut -d'|' -f4) |"
  echo "| 4 KiB pages: p=2 one 8 MiB bsp_hpput (two copies, overlapping) | $(echo "$small" | cut -d'|' -f2) | | |"
  echo "| 4 KiB pages: p=2 one 8 MiB bsp_get (two copies, overlapping) | $(echo "$small" | cut -d'|' -f3) | | |"
  echo "| huge pages: p=2 one 8 MiB bsp_put, single copy (moved aside; --shm-single-copy=off: two) | $(echo "$huge" | cut -d'|' -f1) ($(echo "$two" | cut -d'|' -f1)) | | memcpy of the same buffers $(echo "$huge" | cut -d'|' -f4) |"
  echo "| huge pages: p=2 one 8 MiB bsp_hpput, single copy (--shm-single-copy=off: two) | $(echo "$huge" | cut -d'|' -f2) ($(echo "$two" | cut -d'|' -f2)) | | |"
  echo "| huge pages: p=2 one 8 MiB bsp_get, single copy (--shm-single-copy=off: two) | $(echo "$huge" | cut -d'|' -f3) ($(echo "$two" | cut -d'|' -f3)) | | |"
}
if [ $bulk_only = yes ]; then
  echo "| figure (best / median) | shm | | floor, same run |"
  echo "|---|---|---|---|"
  bulk_rows
  exit 0
fi

shm2=$(sync_row shm 2)
shm4=$(sync_row shm 4)
nic2=$(sync_row nic 2 2>/dev/null || echo "n/a|n/a")

echo "| figure (medians / minimum) | shm | nic on lo | floor, same run |"
echo "|---|---|---|---|"
echo "| p=2 empty bsp_sync, µs | ${shm2%%|*} | ${nic2%%|*} | shm ping-pong $(echo "$floors" | awk -F, '$1=="pingpong_spin_us" {print $2" / "$3}') |"
echo "| p=2 4-byte put + sync, µs | ${shm2#*|} | ${nic2#*|} | |"
echo "| p=4 empty bsp_sync (2 cores), µs | ${shm4%%|*} | | futex wake-up $(echo "$floors" | awk -F, '$1=="pingpong_futex_us" {print $2" / "$3}'), pipe $(echo "$floors" | awk -F, '$1=="pingpong_pipe_us" {print $2" / "$3}') |"
memcpy=$(echo "$floors" | awk -F, '$1=="memcpy_8mib_gbps" {print $3" / "$2}')
echo "| p=2 one 8 MiB bsp_put, GB/s (best / median) | $(bandwidth shm) | $(bandwidth nic 2>/dev/null || echo n/a) | memcpy $memcpy |"
echo "| the same, pushed through the rings (--pull-threshold=0) | $(bandwidth shm put --pull-threshold=0) | | |"
echo "| p=2 one 8 MiB bsp_hpput, GB/s | $(bandwidth shm hpput) | $(bandwidth nic hpput 2>/dev/null || echo n/a) | |"
echo "| p=2 one 8 MiB bsp_get, GB/s | $(bandwidth shm get) | $(bandwidth nic get 2>/dev/null || echo n/a) | |"
bulk_rows
