#!/bin/sh
# tests/fuzz/run_libfuzzer.sh [seconds] [target...]: builds each fuzz target of tests/fuzz
# with clang's libFuzzer (-fsanitize=fuzzer,address,undefined) and runs it for `seconds`
# (default 60) from a corpus that starts with the target's seeds. Exits non-zero if any
# target crashed or failed a check; the input that did is left in $FUZZ_OUT/<target>/
# (crash-*, its hex dump printed here), reproducible with
#   $FUZZ_OUT/<target>/<target> $FUZZ_OUT/<target>/crash-...
# Targets: records frame link_report control_message protocol_core (default: all).
# Needs clang and its runtime (Debian bookworm: apt-get install -y clang libclang-rt-14-dev)
# and libsodium-dev. Builds outside Bazel, from the sources of the tree it lives in.
# FUZZ_OUT (default /tmp/bsp-libfuzzer) holds binaries, corpora and crashes; corpora
# are kept between runs, so a second run goes on where the first stopped.
set -u
seconds=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-records frame link_report control_message protocol_core}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${FUZZ_OUT:-/tmp/bsp-libfuzzer}
CXX=${CXX_FUZZ:-clang++}

if ! command -v "$CXX" >/dev/null 2>&1; then
  echo "run_libfuzzer.sh: $CXX not found (apt-get install -y clang libclang-rt-14-dev)" >&2
  exit 2
fi

# The decoders' sources each target needs besides its own file.
sources_for() {
  case $1 in
    records) echo "bsplib/dissemination_barrier.cc bsplib/bulk_copy.cc" ;;
    frame) echo "recovery/frame_codec.cc recovery/crc32c.cc auth/mac.cc auth/bulk_mac.cc auth/nh.cc" ;;
    link_report) echo "recovery/link_report.cc" ;;
    control_message) echo "auth/mac.cc" ;;
    protocol_core)
      echo "recovery/ack_policy.cc recovery/buffer_ack_policy.cc recovery/buffer_pool.cc recovery/every_ack_policy.cc" \
           "recovery/pupa_ack_policy.cc recovery/protocol_core.cc recovery/link_report.cc recovery/frame_codec.cc" \
           "recovery/crc32c.cc recovery/stats.cc auth/mac.cc auth/bulk_mac.cc auth/nh.cc" ;;
    *) echo "run_libfuzzer.sh: no target '$1'" >&2; return 1 ;;
  esac
}

flags="-std=c++20 -O1 -g -fno-omit-frame-pointer -I$root"
failed=""
for target in $targets; do
  extra=$(sources_for "$target") || exit 2
  dir=$out/$target
  mkdir -p "$dir/corpus"
  srcs="$root/tests/fuzz/${target}_fuzz.cc"
  for s in $extra; do srcs="$srcs $root/$s"; done
  echo "== $target: building"
  # shellcheck disable=SC2086
  if ! $CXX $flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined $srcs -lsodium -lfmt \
      -o "$dir/$target" ||
     ! $CXX $flags -fsanitize=address $srcs "$root/tests/fuzz/fuzz_driver.cc" -lsodium -lfmt -o "$dir/$target-seeds"; then
    echo "run_libfuzzer.sh: $target does not build" >&2
    exit 2
  fi
  "$dir/$target-seeds" --write-seeds "$dir/seeds" >/dev/null
  echo "== $target: fuzzing for $seconds s"
  (cd "$dir" && ASAN_OPTIONS=detect_leaks=0 ./"$target" -max_total_time="$seconds" -max_len=70000 -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$dir/" corpus seeds >"$dir/log" 2>&1)
  status=$?
  grep -E '^#[0-9]+.*(DONE|pulse)|stat::number_of_executed_units|stat::peak_rss|cov:' "$dir/log" | tail -3
  if [ $status -ne 0 ]; then
    failed="$failed $target"
    echo "== $target: FAILED (exit $status); log: $dir/log"
    grep -E 'ERROR|FUZZ_CHECK|SUMMARY|runtime error' "$dir/log" | head -5
    for crash in "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-*; do
      [ -f "$crash" ] || continue
      echo "   $crash:"
      od -An -tx1 -v "$crash" | tr -d ' \n' | fold -w 64 | sed 's/^/     /'
      echo
    done
  else
    echo "== $target: no crash; corpus $(ls "$dir/corpus" | wc -l) inputs"
  fi
done
if [ -n "$failed" ]; then
  echo "run_libfuzzer.sh: failures in:$failed"
  exit 1
fi
echo "run_libfuzzer.sh: every target ran $seconds s without a crash"
