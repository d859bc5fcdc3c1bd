#!/bin/sh
# bench/raw_frame_floor_test.sh: raw_frame_floor between two emulated hosts (--netns):
# frames cross from host 0's eth0 to host 1's through the switch and are counted there;
# a missing namespace, a missing interface or a receiving interface that is down end the
# run with an error naming it, within a bound, never a hang. Builds its own two-host
# cluster (tools/cluster.sh, root); skipped with the reason when it cannot.
set -u
root=${TEST_SRCDIR:?run by bazel test}/${TEST_WORKSPACE:?}
cd "$root" || exit 1
export TMPDIR="${TEST_TMPDIR:-/tmp}"
floor=bench/raw_frame_floor
out=$TMPDIR/out.txt
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect() {  # file pattern what
  grep -q -- "$2" "$1" || { fail "$3: no '$2' in:"; cat "$1"; }
}
skip() { echo "SKIPPED: $*"; exit 0; }

[ "$(id -u)" = 0 ] || skip "needs root (namespaces, raw frames)"
command -v ip > /dev/null || skip "no ip command (iproute2)"
ip netns add "rfprobe$$" 2> /dev/null || skip "cannot make a network namespace here"
ip netns delete "rfprobe$$"
# A prefix of its own (short: the switch's interfaces are named PREFIXv0 ...).
prefix="rf$(($$ % 100000))x"
trap 'sh tools/cluster.sh down --prefix "$prefix" > /dev/null 2>&1' EXIT
trap 'exit 1' INT TERM  # a timed-out test still takes its cluster down
sh tools/cluster.sh up 2 --prefix "$prefix" > "$out" 2>&1 || { cat "$out"; skip "tools/cluster.sh up failed (no veth or bridge?)"; }

# Every run is bounded here too: the program's own bounds are 30 s per wait.
run() {  # expected-exit seconds args...
  want=$1 bound=$2
  shift 2
  start=$(date +%s)
  timeout -s KILL "$bound" "$floor" "$@" > "$out" 2>&1
  got=$?
  [ "$got" = 137 ] && fail "raw_frame_floor $* still ran after $bound s"
  [ "$got" = "$want" ] || fail "raw_frame_floor $*: exit $got, want $want"
  echo "raw_frame_floor $*: exit $got after $(($(date +%s) - start)) s"
}

for source in one buffer; do
  for wait in spin poll; do
    run 0 120 --netns="$prefix" --mtu=1500 --total=4194304 --repetitions=2 --source=$source --wait=$wait
    expect "$out" "raw frames on eth0 from ${prefix}0 to ${prefix}1: 1500 bytes each" "$source/$wait between hosts"
    # Every frame arrives (nothing else loads the link) at a rate above zero.
    expect "$out" "best [0-9]*\.[0-9]* GB/s" "$source/$wait rate"
    grep -q "best 0\.00 GB/s" "$out" && fail "$source/$wait: nothing arrived"
  done
done
# The receiver copying every payload out, as a delivering receiver must: all arrive.
run 0 120 --netns="$prefix" --mtu=1500 --total=4194304 --repetitions=2 --source=buffer --wait=spin --deliver=copy
expect "$out" "rx=ring, payloads copied out: best [0-9]*\.[0-9]* GB/s" "--deliver=copy between hosts"
expect "$out" "median 0\.0% lost" "--deliver=copy: every frame delivered"
grep -q "best 0\.00 GB/s" "$out" && fail "--deliver=copy: nothing arrived"
run 0 120 --netns="$prefix" --mtu=1500 --total=1048576 --repetitions=1 --csv=1
expect "$out" "^eth0,1500,ring," "CSV row between hosts"

run 2 60 --netns="$prefix" --wait=spinning --total=1048576 --repetitions=1
expect "$out" "want poll or spin, one or buffer" "an unknown --wait"
run 2 60 --netns="$prefix" --deliver=touch --total=1048576 --repetitions=1
expect "$out" "--deliver=touch: want poll or spin, one or buffer, none or copy" "an unknown --deliver"
run 1 60 --netns="no${prefix}" --total=1048576 --repetitions=1
expect "$out" "entering network namespace /var/run/netns/no${prefix}0" "a missing namespace"
run 1 60 --netns="$prefix" --iface=nosuch0 --total=1048576 --repetitions=1
expect "$out" "no interface nosuch0" "a missing interface"
# The receiver's end down: its own check refuses it, and the sender says the receiver
# ended before it was ready, instead of sending into nothing.
ip -n "${prefix}1" link set eth0 down
run 1 60 --netns="$prefix" --total=1048576 --repetitions=1
expect "$out" "receiver: interface eth0 is down" "the receiving interface down"
expect "$out" "ended (exit 1) before the receiver's socket and ring" "the sender naming the receiver's exit"

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "PASS"
