#!/bin/sh
# bench/peers_test.sh: bench/peers.sh, bench/peers_nas.sh, tools/nas_compare.sh and
# bench/targets.py answer --help, and a peer that is not given or not found is a column "n/a" with a note while our
# own columns are measured (exit 0), not a failure; a bad option is refused.
set -u
root=${TEST_SRCDIR:?run by bazel test}/${TEST_WORKSPACE:?}
cd "$root" || exit 1
export TMPDIR="${TEST_TMPDIR:-/tmp}"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect() {  # file pattern what
  grep -q -- "$2" "$1" || { fail "$3: no '$2' in:"; cat "$1"; }
}
out=$TMPDIR/out.txt

for script in bench/peers.sh bench/peers_nas.sh tools/nas_compare.sh; do
  sh "$script" --help > "$out" 2>&1 || fail "$script --help exited $?"
  expect "$out" "--npb-mpi" "$script --help"
done
sh bench/peers.sh --rounds 1 --no-such-option 1 > "$out" 2>&1 && fail "peers.sh took an unknown option"
expect "$out" "unknown option --no-such-option" "peers.sh, unknown option"
sh bench/peers.sh --rounds x > "$out" 2>&1 && fail "peers.sh took --rounds x"

# No peer given (the environment cleared of their variables), one given but absent.
env -u MULTICOREBSP -u BSPONMPI -u NPB_MPI sh bench/peers.sh --no-build --bin "$root" --rounds 1 \
    --repetitions 200 --bulk-repetitions 3 --seconds 1 --bsponmpi "$TMPDIR/no-bsponmpi" > "$out" 2>&1 ||
  { fail "peers.sh without peers exited $?"; cat "$out"; }
expect "$out" "| p = 2 empty superstep, µs | [0-9.]* / [0-9.]* | [0-9.]* / [0-9.]* | n/a (not given) | n/a (not found) | n/a (not found) | shm ping-pong [0-9.]* / [0-9.]* |" "the p = 2 row"
expect "$out" "| p = 2 one 8 MiB put, GB/s | [0-9.]* / [0-9.]* |" "the 8 MiB row"
expect "$out" "| p = 4 empty superstep" "the p = 4 row"
expect "$out" "^- MulticoreBSP: not given" "the MulticoreBSP note"
expect "$out" "^- BSPonMPI: $TMPDIR/no-bsponmpi/bin/bspcc or bin/bsprun not found" "the BSPonMPI note"
expect "$out" "^- NPB-MPI: not given" "the NPB-MPI note"
grep -q "failed" "$out" && { fail "a run of ours failed"; cat "$out"; }

# NPB-MPI absent: ours alone, MPI cells n/a, a note; through tools/nas_compare.sh.
sh tools/nas_compare.sh --npb-mpi "$TMPDIR/no-npb" --no-build --bin "$root" --class S --procs 2 \
    --benchmarks ep --rounds 1 > "$out" 2>&1 || { fail "nas_compare.sh --npb-mpi absent exited $?"; cat "$out"; }
expect "$out" "| EP | [0-9.]* | n/a (not found) | - | [0-9.]* | n/a (not found) | - |" "the EP row"
expect "$out" "^- NPB-MPI: no $TMPDIR/no-npb/bin/\*.S.x" "the NPB-MPI note"

# The targets table without peers: our rows against the floors, the peers' rows left out.
env -u MULTICOREBSP -u NPB_MPI python3 bench/targets.py --help > "$out" 2>&1 || fail "targets.py --help exited $?"
expect "$out" "--multicorebsp" "targets.py --help"
env -u MULTICOREBSP -u NPB_MPI python3 bench/targets.py --no-build --bin "$root" --rounds 1 --seconds 1 \
    > "$out" 2>&1 || { fail "targets.py without peers exited $?"; cat "$out"; }
expect "$out" "| empty superstep, p = 2, shm | [0-9.]* µs | bare shm ping-pong [0-9.]* µs | [0-9.]* | ≤ 1.5 |" \
  "the superstep target row"
expect "$out" "| one 8 MiB hpput, p = 2, shm, huge pages | [0-9.]* GB/s | memcpy [0-9.]* GB/s | [0-9.]* | ≥ 0.5 |" \
  "the hpput target row"
expect "$out" "| one 8 MiB put, p = 2, udp on lo | [0-9.]* GB/s |" "the udp target row"
expect "$out" "^- MulticoreBSP: not given" "targets.py's MulticoreBSP note"
grep -q "MulticoreBSP [0-9]" "$out" && fail "targets.py printed a MulticoreBSP row without it"
grep -q ": \\(exit [0-9]\\|timed out\\)" "$out" && { fail "a run of targets.py failed"; cat "$out"; }

[ "$failures" = 0 ] && echo PASS
exit "$failures"
