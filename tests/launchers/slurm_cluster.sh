#!/bin/sh
# tests/launchers/slurm_cluster.sh: a throw-away Slurm cluster for tests, made and ended
# by the test itself; nothing in /etc or of the machine's own Slurm or munge is read or
# changed. Everything lives under DIR (a short path: munge's and PMIx's sockets live
# there): a munge key and munged, slurm.conf, slurmctld -D, and one slurmd -D per host.
#   slurm_cluster.sh start DIR [--hosts N] [--prefix P] [--cluster PATH] [--owner PID]
#   slurm_cluster.sh stop DIR
# --hosts N (default 1): with N > 1, the hosts are network namespaces PREFIX0..PREFIX(N-1)
# of an emulated cluster (tools/cluster.sh, given by --cluster), host i at 10.77.0.(i+1),
# each running its own slurmd (slurmd -N nI) and slurmctld in host 0; srun and sbatch
# must then run inside host 0 (ip netns exec PREFIX0 ...). With N = 1, one node on the
# machine's own loopback. Every node says it has 8 CPUs (SlurmdParameters=
# config_overrides), so a 2-core machine takes 8 tasks per node.
# start writes DIR/slurm.env (SLURM_CONF=..., SLURM_NODES=N, SLURM_NETNS=name or empty)
# and returns once sinfo shows every node idle (bounded: 30 s), or exits 3 saying which
# daemon did not start (a test skips then). --owner PID: a watcher stops the cluster when
# PID ends, so a test killed by its timeout leaves nothing behind.
# stop ends the daemons, every job step and task they started (found by SLURM_CONF in
# their environment, and every process in the cluster's namespaces), and removes DIR.
# Needs root.
set -eu
unset SLURM_CONF  # only the daemons get this cluster's (stop finds them by it)
command=${1:-}
dir=${2:-}
[ -n "$command" ] && [ -n "$dir" ] || { echo "usage: slurm_cluster.sh start|stop DIR [--hosts N] [--prefix P] [--cluster PATH] [--owner PID]" >&2; exit 2; }
if [ "$command" = watch ]; then
  # (internal) stops the cluster in DIR once process $3 has ended.
  while kill -0 "$3" 2>/dev/null; do sleep 0.5; done
  exec "$0" stop "$dir"
fi
shift 2
hosts=1
prefix=slm
cluster=""
owner=""
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) hosts=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    --cluster) cluster=$2; shift 2 ;;
    --owner) owner=$2; shift 2 ;;
    *) echo "slurm_cluster.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
conf="$dir/slurm.conf"
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")

kill_pidfile() {
  [ -f "$1" ] || return 0
  pid=$(cat "$1" 2>/dev/null || true)
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
}

# Processes whose environment names this cluster's slurm.conf: slurmctld, slurmd,
# slurmstepd and the tasks and batch scripts they started.
cluster_processes() {
  for environ in /proc/[0-9]*/environ; do
    pid=${environ#/proc/}
    pid=${pid%/environ}
    [ "$pid" = "$$" ] && continue
    if tr '\0' '\n' 2>/dev/null <"$environ" | grep -qx "SLURM_CONF=$conf"; then echo "$pid"; fi
  done
}

stop() {
  [ -f "$dir/slurm.env" ] || [ -f "$dir/munged.pid" ] || [ -f "$conf" ] || { rm -rf "$dir"; return 0; }
  netns=""
  [ -f "$dir/slurm.env" ] && netns=$(sed -n 's/^SLURM_NETNS=//p' "$dir/slurm.env")
  [ "$(cat "$dir/watcher.pid" 2>/dev/null)" = "$$" ] || kill_pidfile "$dir/watcher.pid"
  kill_pidfile "$dir/slurmctld.pid"
  for pidfile in "$dir"/slurmd.*.pid; do kill_pidfile "$pidfile"; done
  tries=0
  while :; do
    left=$(cluster_processes)
    [ -z "$left" ] && break
    kill -9 $left 2>/dev/null || true
    tries=$((tries + 1))
    [ $tries -ge 50 ] && { echo "slurm_cluster.sh: processes $left do not end" >&2; break; }
    sleep 0.1
  done
  if [ -n "$netns" ] && [ -f "$dir/cluster_script" ]; then
    sh "$(cat "$dir/cluster_script")" down --prefix "$prefix_of_netns" >/dev/null 2>&1 || true
  fi
  kill_pidfile "$dir/munged.pid"
  rm -rf "$dir"
}

fail() {
  echo "slurm_cluster.sh: $*" >&2
  stop
  exit 3
}

case "$command" in
  stop)
    prefix_of_netns=""
    [ -f "$dir/prefix" ] && prefix_of_netns=$(cat "$dir/prefix")
    stop
    exit 0
    ;;
  start) ;;
  *) echo "slurm_cluster.sh: unknown command $command" >&2; exit 2 ;;
esac

[ "$(id -u)" = 0 ] || { echo "slurm_cluster.sh: needs root" >&2; exit 3; }
for program in munged slurmctld slurmd sinfo srun; do
  command -v "$program" >/dev/null 2>&1 || [ -x "/usr/sbin/$program" ] || { echo "slurm_cluster.sh: $program is not installed" >&2; exit 3; }
done
prefix_of_netns=""
echo "$prefix" >"$dir/prefix"
mkdir -p "$dir/state" "$dir/spool" "$dir/tmp" "$dir/log"
chmod 700 "$dir"

# ---- munge: its own key, socket and files ----
dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$dir/munge.key"
munged --socket="$dir/munge.sock" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
  --log-file="$dir/log/munged.log" --seed-file="$dir/munge.seed" --force 2>"$dir/log/munged.err" ||
  fail "munged did not start: $(cat "$dir/log/munged.err") $(tail -3 "$dir/log/munged.log" 2>/dev/null)"
tries=0
until [ -S "$dir/munge.sock" ]; do
  tries=$((tries + 1))
  [ $tries -ge 100 ] && fail "munged made no socket: $(tail -3 "$dir/log/munged.log" 2>/dev/null)"
  sleep 0.05
done

# ---- hosts ----
netns=""
controller_address=127.0.0.1
if [ "$hosts" -gt 1 ]; then
  [ -n "$cluster" ] || fail "--hosts $hosts needs --cluster PATH (tools/cluster.sh)"
  cluster=$(cd "$(dirname "$cluster")" && pwd)/$(basename "$cluster")
  echo "$cluster" >"$dir/cluster_script"
  prefix_of_netns=$prefix
  sh "$cluster" up "$hosts" --prefix "$prefix" >"$dir/log/cluster.out" 2>&1 ||
    fail "the emulated cluster did not come up: $(cat "$dir/log/cluster.out")"
  netns="${prefix}0"
  controller_address=10.77.0.1
fi
# Commands enter a host's network namespace only (nsenter), not the mount namespace
# `ip netns exec` makes: that one remounts /sys without /sys/fs/cgroup, and slurmd 22.05
# will not start without its cgroup plugin, even with proctrack/linuxproc and task/none.
in_host() {  # in_host I COMMAND...: runs COMMAND on host I
  i=$1
  shift
  if [ -n "$netns" ]; then nsenter --net="/run/netns/${prefix}$i" "$@"; else "$@"; fi
}
# spawn I LOG COMMAND...: starts a daemon on host I in a session of its own (a test's
# clean-up of its process group must not end it), output to LOG; its pid is $!.
spawn() {
  i=$1
  log=$2
  shift 2
  if [ -n "$netns" ]; then
    setsid nsenter --net="/run/netns/${prefix}$i" "$@" </dev/null >"$log" 2>&1 &
  else
    setsid "$@" </dev/null >"$log" 2>&1 &
  fi
}

# ---- slurm.conf ----
if [ "$hosts" -gt 1 ]; then
  nodes="NodeName=n[0-$((hosts - 1))] NodeAddr=10.77.0.[1-$hosts] CPUs=8 State=UNKNOWN"
  node_list="n[0-$((hosts - 1))]"
else
  nodes="NodeName=n0 NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN"
  node_list="n0"
fi
cat >"$conf" <<EOF
ClusterName=bsptest
SlurmctldHost=$(hostname -s)($controller_address)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
TmpFS=$dir/tmp
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
SlurmdTimeout=30
MessageTimeout=10
KillWait=2
InactiveLimit=0
MinJobAge=2
PlugStackConfig=$dir/plugstack.conf
$nodes
PartitionName=test Nodes=$node_list Default=YES MaxTime=10 State=UP OverSubscribe=YES
EOF
: >"$dir/plugstack.conf"
i=0
while [ $i -lt "$hosts" ]; do
  mkdir -p "$dir/spool/n$i"
  i=$((i + 1))
done
cat >"$dir/slurm.env" <<EOF
SLURM_CONF=$conf
SLURM_NODES=$hosts
SLURM_NETNS=$netns
EOF

# ---- the daemons, each in the foreground (-D) in the background of this script ----
if [ -n "$owner" ]; then
  # Stops the cluster when the test that made it ends, however it ends.
  setsid "$self" watch "$dir" "$owner" </dev/null >/dev/null 2>&1 &
  echo $! >"$dir/watcher.pid"
fi
export SLURM_CONF="$conf"
spawn 0 "$dir/log/slurmctld.out" slurmctld -D -i
echo $! >"$dir/slurmctld.pid"
i=0
while [ $i -lt "$hosts" ]; do
  if [ -n "$netns" ]; then
    # Slurm's PMIx plugin keeps a step's client directory under TmpFS by job and step
    # only: nodes sharing one file system would collide. Each slurmd (and so its steps)
    # sees its own TmpFS, DIR/tmp/nI bound over DIR/tmp in a mount namespace of its own.
    mkdir -p "$dir/tmp/n$i"
    spawn $i "$dir/log/slurmd.n$i.out" unshare --mount --propagation private \
      sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh "$dir/tmp/n$i" "$dir/tmp" slurmd -D -N "n$i"
  else
    spawn $i "$dir/log/slurmd.n$i.out" slurmd -D -N "n$i"
  fi
  echo $! >"$dir/slurmd.n$i.pid"
  i=$((i + 1))
done

# ---- wait (bounded) until every node is idle ----
tries=0
while :; do
  idle=$(in_host 0 sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | wc -l)
  [ "$idle" -ge "$hosts" ] && break
  tries=$((tries + 1))
  dead=""
  for pidfile in "$dir/slurmctld.pid" "$dir"/slurmd.*.pid; do
    kill -0 "$(cat "$pidfile")" 2>/dev/null || dead="$dead $(basename "$pidfile" .pid)"
  done
  if [ -n "$dead" ]; then
    for daemon in $dead; do
      why="${why:-}$daemon: $(tail -3 "$dir/log/$daemon.out" 2>/dev/null | tr '\n' ' '); "
    done
    fail "daemons ended at start-up: $why"
  fi
  if [ $tries -ge 150 ]; then
    why="slurmctld: $(tail -3 "$dir/log/slurmctld.log" 2>/dev/null) $(tail -3 "$dir/log/slurmctld.out" 2>/dev/null)"
    why="$why; slurmd n0: $(tail -3 "$dir/log/slurmd.n0.log" 2>/dev/null) $(tail -3 "$dir/log/slurmd.n0.out" 2>/dev/null)"
    why="$why; sinfo: $(in_host 0 sinfo -h -N 2>&1 | head -5)"
    fail "the Slurm nodes did not become idle within 30 s ($why)"
  fi
  sleep 0.2
done
echo "slurm cluster: $hosts node(s) idle${netns:+ in namespaces ${prefix}0..${prefix}$((hosts - 1))}; SLURM_CONF=$conf"
