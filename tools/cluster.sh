#!/bin/sh
# tools/cluster.sh: an emulated switched cluster on one machine. Each host is a network
# namespace PREFIX0 .. PREFIX(N-1) with an interface eth0 (10.77.0.1, .2, ...) whose other
# end is port vI of one Linux bridge, the switch, which lives in a namespace of its own
# (PREFIXsw). Nothing crosses the machine's own namespace, so its firewall and routes
# never see cluster traffic and several clusters can be up at once. bsprun's coordinator
# listens on host 0. With --rate, every link runs at that rate, as on the paper's Fast
# Ethernet: each host's own interface sends through a token bucket with a NIC-sized queue
# (--host-queue, default 1.5 MB, about a 1000-frame txqueue: a sender is held to the wire
# rate, as by a real NIC, not dropped), and every switch port through one with a short
# queue (--queue), so many-to-one traffic overflows it and frames are dropped, as at the
# paper's switch.
#   tools/cluster.sh up N [--prefix P] [--rate 100mbit] [--queue BYTES] [--host-queue BYTES]
#   tools/cluster.sh down [--prefix P]
#   bsprun -n N --netns=P --transport=udp prog      (process i runs on host P<i>)
# Needs root (CAP_NET_ADMIN).
set -eu
command=${1:-}
shift || true
count=0
if [ "$command" = up ]; then count=${1:?"usage: cluster.sh up N [--prefix P] [--rate R] [--queue BYTES] [--host-queue BYTES]"}; shift; fi
prefix=bsp
rate=""
queue=15000
host_queue=1500000
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --queue) queue=$2; shift 2 ;;
    --host-queue) host_queue=$2; shift 2 ;;
    *) echo "cluster.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
switch="${prefix}sw"

down() {
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^${prefix}([0-9]+|sw)$" || true); do
    ip netns delete "$ns" 2>/dev/null || true
  done
  # Clusters made by earlier versions kept the bridge in this namespace.
  for link in $(ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E "^${prefix}(v[0-9]+|br)$" || true); do
    ip link delete "$link" 2>/dev/null || true
  done
}

case "$command" in
  up)
    down
    ip netns add "$switch"
    ip -n "$switch" link add br0 type bridge
    ip -n "$switch" link set br0 up
    i=0
    while [ $i -lt "$count" ]; do
      ns="${prefix}${i}"
      ip netns add "$ns"
      ip -n "$ns" link add eth0 type veth peer name "v${i}" netns "$switch"
      ip -n "$switch" link set "v${i}" master br0
      ip -n "$switch" link set "v${i}" up
      ip -n "$ns" addr add "10.77.0.$((i + 1))/24" dev eth0
      ip -n "$ns" link set eth0 up
      ip -n "$ns" link set lo up
      if [ -n "$rate" ]; then
        # The switch's output port toward host i: a token bucket with a short queue.
        tc -n "$switch" qdisc add dev "v${i}" root tbf rate "$rate" burst 16kb limit "$queue"
        # The host's NIC: the same rate, and a queue that holds a sender back instead of dropping.
        tc -n "$ns" qdisc add dev eth0 root tbf rate "$rate" burst 16kb limit "$host_queue"
      fi
      i=$((i + 1))
    done
    echo "cluster $prefix: $count hosts ${prefix}0..${prefix}$((count - 1)) on a switch in namespace $switch${rate:+, ports shaped to $rate}"
    ;;
  down)
    down
    echo "cluster $prefix: removed"
    ;;
  *)
    echo "usage: cluster.sh up N [--prefix P] [--rate R] [--queue BYTES] [--host-queue BYTES] | cluster.sh down [--prefix P]" >&2
    exit 2
    ;;
esac
