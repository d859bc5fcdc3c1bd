#!/bin/sh
# tools/cluster.sh: an emulated switched cluster on one machine. Each host is a network
# namespace PREFIX0 .. PREFIX(N-1) with an interface eth0 (10.77.0.1, .2, ...) whose other
# end is a port of one Linux bridge PREFIXbr (the switch, 10.77.0.254, where bsprun's
# coordinator listens). With --rate, every switch port is shaped by a token bucket with a
# short queue, so many-to-one traffic overflows it and frames are dropped, as at the
# paper's Fast Ethernet switch.
#   tools/cluster.sh up N [--prefix P] [--rate 100mbit] [--queue BYTES]
#   tools/cluster.sh down [--prefix P]
#   bsprun -n N --netns=P --transport=udp prog      (process i runs on host P<i>)
# Needs root (CAP_NET_ADMIN).
set -eu
command=${1:-}
shift || true
count=0
if [ "$command" = up ]; then count=${1:?"usage: cluster.sh up N [--prefix P] [--rate R] [--queue BYTES]"}; shift; fi
prefix=bsp
rate=""
queue=15000
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --queue) queue=$2; shift 2 ;;
    *) echo "cluster.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bridge="${prefix}br"
if [ ${#bridge} -gt 15 ]; then echo "cluster.sh: prefix too long for interface names" >&2; exit 2; fi

down() {
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^${prefix}[0-9]+$" || true); do
    ip netns delete "$ns" 2>/dev/null || true
  done
  for link in $(ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E "^${prefix}v[0-9]+$" || true); do
    ip link delete "$link" 2>/dev/null || true
  done
  ip link delete "$bridge" 2>/dev/null || true
}

case "$command" in
  up)
    down
    ip link add "$bridge" type bridge
    ip link set "$bridge" type bridge forward_delay 0 2>/dev/null || true
    ip addr add 10.77.0.254/24 dev "$bridge"
    ip link set "$bridge" up
    i=0
    while [ $i -lt "$count" ]; do
      ns="${prefix}${i}"
      port="${prefix}v${i}"
      ip netns add "$ns"
      ip link add "$port" type veth peer name eth0 netns "$ns"
      ip link set "$port" master "$bridge"
      ip link set "$port" up
      ip -n "$ns" addr add "10.77.0.$((i + 1))/24" dev eth0
      ip -n "$ns" link set eth0 up
      ip -n "$ns" link set lo up
      if [ -n "$rate" ]; then
        # The switch's output port toward host i: a token bucket with a short queue.
        tc qdisc add dev "$port" root tbf rate "$rate" burst 16kb limit "$queue"
      fi
      i=$((i + 1))
    done
    echo "cluster $prefix: $count hosts ${prefix}0..${prefix}$((count - 1)) on bridge $bridge${rate:+, ports shaped to $rate}"
    ;;
  down)
    down
    echo "cluster $prefix: removed"
    ;;
  *)
    echo "usage: cluster.sh up N [--prefix P] [--rate R] [--queue BYTES] | cluster.sh down [--prefix P]" >&2
    exit 2
    ;;
esac
