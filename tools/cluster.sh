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
# With --ingress-shaper (and --rate), each host's traffic is also shaped where it enters
# the switch: its port's ingress is redirected through an IFB device with the same rate
# and the host's queue, for senders that bypass the host's qdisc (the xdp transport's
# AF_XDP frames go straight to the driver, so the host's token bucket never sees them).
# With --sshd DIR, every host also runs an sshd of its own (Debian's openssh-server) with
# keys and configuration made under DIR (nothing of the machine's own ssh set-up is read
# or changed; /run/sshd, sshd's privilege-separation directory, is made if missing), in a
# UTS namespace whose host name is the namespace's; DIR/ssh_config reaches them as root,
# and DIR/hostfile lists them (--slots K each), for bsprun run inside host 0:
#   ip netns exec P0 bsprun -n 8 --hostfile=DIR/hostfile --rsh="ssh -F DIR/ssh_config" prog
#   tools/cluster.sh up N [--prefix P] [--rate 100mbit] [--queue BYTES] [--host-queue BYTES]
#                         [--ingress-shaper] [--sshd DIR [--slots K]]
#   tools/cluster.sh down [--prefix P]        (also ends every process left in its hosts)
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
sshd_dir=""
slots=1
ingress_shaper=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --queue) queue=$2; shift 2 ;;
    --host-queue) host_queue=$2; shift 2 ;;
    --sshd) sshd_dir=$2; shift 2 ;;
    --slots) slots=$2; shift 2 ;;
    --ingress-shaper) ingress_shaper=1; shift ;;
    *) echo "cluster.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
switch="${prefix}sw"

down() {
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^${prefix}([0-9]+|sw)$" || true); do
    # Whatever still runs on the host (its sshd, processes a test left) ends with it.
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null || true
    ip netns delete "$ns" 2>/dev/null || true
  done
  # Clusters made by earlier versions kept the bridge in this namespace.
  for link in $(ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -E "^${prefix}(v[0-9]+|br)$" || true); do
    ip link delete "$link" 2>/dev/null || true
  done
}

# An sshd per host, configured under $sshd_dir; returns once each answers.
start_sshds() {
  [ -x /usr/sbin/sshd ] || { echo "cluster.sh: /usr/sbin/sshd is missing (apt-get install openssh-server)" >&2; exit 3; }
  mkdir -p "$sshd_dir"
  sshd_dir=$(cd "$sshd_dir" && pwd)
  [ -f "$sshd_dir/host_key" ] || ssh-keygen -q -t ed25519 -N "" -f "$sshd_dir/host_key"
  [ -f "$sshd_dir/id_ed25519" ] || ssh-keygen -q -t ed25519 -N "" -f "$sshd_dir/id_ed25519"
  cp "$sshd_dir/id_ed25519.pub" "$sshd_dir/authorized_keys"
  chmod 600 "$sshd_dir/authorized_keys"
  cat >"$sshd_dir/sshd_config" <<EOF
Port 22
HostKey $sshd_dir/host_key
AuthorizedKeysFile $sshd_dir/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
MaxStartups 100:30:200
MaxSessions 100
EOF
  cat >"$sshd_dir/ssh_config" <<EOF
Host *
  User root
  IdentityFile $sshd_dir/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $sshd_dir/known_hosts
  StrictHostKeyChecking no
  BatchMode yes
  LogLevel ERROR
  ConnectTimeout 10
EOF
  [ -d /run/sshd ] || mkdir -p -m 0755 /run/sshd
  : >"$sshd_dir/hostfile"
  i=0
  while [ $i -lt "$count" ]; do
    ns="${prefix}${i}"
    ip netns exec "$ns" unshare --uts sh -c "hostname $ns && exec /usr/sbin/sshd -f $sshd_dir/sshd_config -o PidFile=$sshd_dir/sshd.$ns.pid -E $sshd_dir/sshd.$ns.log"
    echo "10.77.0.$((i + 1)) slots=$slots" >>"$sshd_dir/hostfile"
    i=$((i + 1))
  done
  i=0
  while [ $i -lt "$count" ]; do
    tries=0
    until ip netns exec "${prefix}0" ssh -F "$sshd_dir/ssh_config" "10.77.0.$((i + 1))" true 2>"$sshd_dir/ssh_check.err"; do
      tries=$((tries + 1))
      if [ $tries -ge 50 ]; then
        echo "cluster.sh: the sshd of host ${prefix}${i} does not answer: $(cat "$sshd_dir/ssh_check.err") $(tail -3 "$sshd_dir/sshd.${prefix}${i}.log" 2>/dev/null)" >&2
        exit 3
      fi
      sleep 0.1
    done
    i=$((i + 1))
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
        if [ "$ingress_shaper" = 1 ]; then
          # What the host sends, shaped again as it enters its switch port: through ifbI.
          ip -n "$switch" link add "ifb${i}" type ifb
          ip -n "$switch" link set "ifb${i}" up
          tc -n "$switch" qdisc add dev "ifb${i}" root tbf rate "$rate" burst 16kb limit "$host_queue"
          tc -n "$switch" qdisc add dev "v${i}" handle ffff: ingress
          tc -n "$switch" filter add dev "v${i}" parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev "ifb${i}"
        fi
      fi
      i=$((i + 1))
    done
    if [ -n "$sshd_dir" ]; then start_sshds; fi
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
