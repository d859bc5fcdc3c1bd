#!/bin/sh
# bench/peers.sh: this library beside the other BSPlib libraries, in one run on this machine.
# Builds bench/peer_bench.c (plain 1998 BSPlib C: empty superstep, 4-byte put superstep,
# 1400-byte h-relation, one 8 MiB put and get) against this library and against each peer
# whose path is given, runs every column once per round, the columns interleaved, and prints
# one markdown table of the medians over rounds, with the bare floors of bench/shm_floors
# (memcpy, shared-memory ping-pong, futex wake-up) measured in the same rounds.
# Run from anywhere; it builds what it needs with bazel unless --no-build.
#
# Usage: bench/peers.sh [--multicorebsp DIR] [--bsponmpi PREFIX] [--npb-mpi DIR]
#                       [--rounds N] [--repetitions N] [--bulk-repetitions N] [--seconds S]
#                       [--work DIR] [--no-build] [--nas-class C] [--nas-benchmarks LIST]
#   --multicorebsp DIR   MulticoreBSP for C, built (`make`) in DIR: DIR/tools/bspcc
#                        (environment: MULTICOREBSP)
#   --bsponmpi PREFIX    BSPonMPI installed under PREFIX: PREFIX/bin/bspcc, PREFIX/bin/bsprun
#                        (environment: BSPONMPI); its columns: Open MPI shared memory
#                        (the default) and TCP (OMPI_MCA_btl=tcp,self OMPI_MCA_osc=pt2pt)
#   --npb-mpi DIR        NPB 3.4-MPI built in DIR (DIR/bin/*.x; environment: NPB_MPI): after
#                        the table, tools/nas_compare.sh --npb-mpi DIR puts our NAS beside
#                        it (class --nas-class, default A; --nas-benchmarks, default all built)
#   --rounds N           interleaved rounds (default 3); the table shows medians over them
#   --repetitions N      supersteps per latency figure and run (default 20000), fewer when a
#                        run would take over --seconds (default 2) per figure
#   --bulk-repetitions N 8 MiB supersteps per bandwidth figure and run (default 20)
#   --work DIR           where the peers' binaries and the logs go (default: a new
#                        temporary directory, kept and named at the end)
#   --no-build           use the binaries already built
#   --bin DIR            where our binaries are (default bazel-bin): DIR/bsplib/bsprun,
#                        DIR/bench/peer_bench, DIR/bench/shm_floors, DIR/nas/...
# A peer whose path is not given is a column "n/a (not given)", one whose path holds no
# build "n/a (not found)", each with a note under the table; that is not a failure. A run
# that fails or times out shows "failed" and names its log. Open MPI refuses root unless
# told: as root the MPI runs get OMPI_ALLOW_RUN_AS_ROOT=1, and
# OMPI_MCA_rmaps_base_oversubscribe=1 allows more ranks than cores. MulticoreBSP pins
# threads to cores and needs a machine.info for more threads than cores: written into the
# run's own directory (`threads P`, `cores C`). --help prints this comment.
case " $* " in *" --help "* | *" -h "*) sed -n '2,/^[^#]/p' "$0" | sed '/^[^#]/d; s/^# \{0,1\}//'; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)

multicorebsp=${MULTICOREBSP:-}
bsponmpi=${BSPONMPI:-}
npb_mpi=${NPB_MPI:-}
rounds=3
reps=20000
bulk=20
seconds=2
work=""
build=1
bin=$root/bazel-bin
nas_class=A
nas_benchmarks=""
usage() { echo "usage: bench/peers.sh [--multicorebsp DIR] [--bsponmpi PREFIX] [--npb-mpi DIR] [--rounds N] ... (--help)" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --*=*) option=${1%%=*}; value=${1#*=}; shift ;;
    --no-build) build=0; shift; continue ;;
    --*) option=$1; [ $# -ge 2 ] || usage; value=$2; shift 2 ;;
    *) usage ;;
  esac
  case $option in
    --multicorebsp) multicorebsp=$value ;;
    --bsponmpi) bsponmpi=$value ;;
    --npb-mpi) npb_mpi=$value ;;
    --rounds) rounds=$value ;;
    --repetitions) reps=$value ;;
    --bulk-repetitions) bulk=$value ;;
    --seconds) seconds=$value ;;
    --work) work=$value ;;
    --bin) bin=$(cd "$value" && pwd) ;;
    --nas-class) nas_class=$value ;;
    --nas-benchmarks) nas_benchmarks=$value ;;
    *) echo "bench/peers.sh: unknown option $option" >&2; usage ;;
  esac
done
for number in "$rounds" "$reps" "$bulk" "$seconds"; do
  case $number in '' | *[!0-9]*) echo "bench/peers.sh: '$number' is not a whole number" >&2; exit 2 ;; esac
done

if [ "$build" = 1 ]; then
  bazel build //bench:peer_bench //bench:shm_floors //bsplib:bsprun >&2
fi
for file in "$bin/bench/peer_bench" "$bin/bench/shm_floors" "$bin/bsplib/bsprun"; do
  [ -x "$file" ] || { echo "bench/peers.sh: $file is not built (drop --no-build)" >&2; exit 1; }
done
if [ -z "$work" ]; then work=$(mktemp -d "${TMPDIR:-/tmp}/bsp-peers.XXXXXX"); fi
mkdir -p "$work/logs"
work=$(cd "$work" && pwd)
results=$work/results.txt   # lines: column p figure median min-or-best
: > "$results"
notes=$work/notes.txt
: > "$notes"
cores=$(nproc)
if [ "$(id -u)" = 0 ]; then
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_rmaps_base_oversubscribe

# Each column: a name, and whether it is here ("" when it is, else what the cell says).
columns="ours-shm ours-default multicorebsp bsponmpi-shm bsponmpi-tcp"
state_multicorebsp=""
state_bsponmpi=""
if [ -z "$multicorebsp" ]; then
  state_multicorebsp="n/a (not given)"
  echo "MulticoreBSP: not given (--multicorebsp DIR or MULTICOREBSP=DIR; build it with \`make\` from the tarball in github BramvdnHeuvel/Docker-MulticoreBSP)." >> "$notes"
elif [ ! -x "$multicorebsp/tools/bspcc" ]; then
  state_multicorebsp="n/a (not found)"
  echo "MulticoreBSP: $multicorebsp/tools/bspcc not found (run \`make\` in its directory)." >> "$notes"
elif ! "$multicorebsp/tools/bspcc" --compat -O2 -o "$work/peer_bench_multicorebsp" bench/peer_bench.c \
       > "$work/logs/build-multicorebsp.log" 2>&1; then
  state_multicorebsp="build failed"
  echo "MulticoreBSP: compiling bench/peer_bench.c failed: $work/logs/build-multicorebsp.log" >> "$notes"
fi
if [ -z "$bsponmpi" ]; then
  state_bsponmpi="n/a (not given)"
  echo "BSPonMPI: not given (--bsponmpi PREFIX or BSPONMPI=PREFIX; CMake build of github wijnand-suijlen/bsponmpi installed to PREFIX)." >> "$notes"
elif [ ! -x "$bsponmpi/bin/bspcc" ] || [ ! -x "$bsponmpi/bin/bsprun" ]; then
  state_bsponmpi="n/a (not found)"
  echo "BSPonMPI: $bsponmpi/bin/bspcc or bin/bsprun not found (install it to that prefix)." >> "$notes"
elif ! "$bsponmpi/bin/bspcc" -O2 -o "$work/peer_bench_bsponmpi" bench/peer_bench.c \
       > "$work/logs/build-bsponmpi.log" 2>&1; then
  state_bsponmpi="build failed"
  echo "BSPonMPI: compiling bench/peer_bench.c failed: $work/logs/build-bsponmpi.log" >> "$notes"
fi
state() {
  case $1 in
    multicorebsp) echo "$state_multicorebsp" ;;
    bsponmpi-*) echo "$state_bsponmpi" ;;
    *) echo "" ;;
  esac
}

# One run of one column at p processes; its figures are appended to $results.
run_column() {  # column p repetitions bulk-repetitions round
  log=$work/logs/$1-p$2-round$5.log
  case $1 in
    ours-shm) set -- "$@" "$bin/bsplib/bsprun" -n "$2" --transport=shm "$bin/bench/peer_bench" ;;
    ours-default) set -- "$@" "$bin/bsplib/bsprun" -n "$2" "$bin/bench/peer_bench" ;;
    multicorebsp)
      dir=$work/multicorebsp-p$2
      mkdir -p "$dir"
      rm -f "$dir/machine.info"
      if [ "$2" -gt "$cores" ]; then printf 'threads %s\ncores %s\n' "$2" "$cores" > "$dir/machine.info"; fi
      set -- "$@" "$work/peer_bench_multicorebsp" ;;
    bsponmpi-shm) set -- "$@" "$bsponmpi/bin/bsprun" -n "$2" "$work/peer_bench_bsponmpi" ;;
    bsponmpi-tcp) set -- "$@" env OMPI_MCA_btl=tcp,self OMPI_MCA_osc=pt2pt \
                         "$bsponmpi/bin/bsprun" -n "$2" "$work/peer_bench_bsponmpi" ;;
  esac
  column=$1 p=$2 r=$3 b=$4 this_round=$5
  shift 5
  if (cd "${dir:-$work}" && timeout 600 "$@" "$p" "$r" "$b" "$seconds") > "$log" 2>&1; then
    awk -v c="$column" -v p="$p" 'NF == 3 && $1 ~ /_(us|gbps)$/ {print c, p, $1, $2, $3}' "$log" >> "$results"
  else
    echo "$column p=$p round $this_round: failed (exit $?), log $log" >> "$notes"
    echo "$column $p failed - -" >> "$results"
  fi
  dir=""
}

dir=""
round=1
while [ "$round" -le "$rounds" ]; do
  echo "round $round of $rounds ..." >&2
  "$bin/bench/shm_floors" --csv --rounds="$reps" --warmup=100 > "$work/logs/floors-round$round.csv" 2>&1 &&
    awk -F, 'NR > 1 {print "floor", 0, $1, $2, $3}' "$work/logs/floors-round$round.csv" >> "$results" ||
    echo "shm_floors failed in round $round: $work/logs/floors-round$round.csv" >> "$notes"
  for column in $columns; do
    [ -z "$(state "$column")" ] || continue
    run_column "$column" 2 "$reps" "$bulk" "$round"
    run_column "$column" 4 "$reps" 0 "$round"
  done
  round=$((round + 1))
done

# The table: per cell the median over rounds of each run's median, and the lowest minimum
# (the highest best, for GB/s) over rounds.
cell() {  # column p figure
  [ -z "$(state "$1")" ] || { state "$1"; return; }
  awk -v c="$1" -v p="$2" -v f="$3" '
    $1 == c && $2 == p && $3 == "failed" { failed = 1 }
    $1 == c && $2 == p && $3 == f { n++; m[n] = $4; if (n == 1 || (f ~ /gbps/ ? $5 > e : $5 < e)) e = $5 }
    END {
      if (n == 0) { print failed ? "failed" : "-"; exit }
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (m[j] < m[i]) { t = m[i]; m[i] = m[j]; m[j] = t }
      median = n % 2 ? m[(n + 1) / 2] : (m[n / 2] + m[n / 2 + 1]) / 2
      printf("%.2f / %.2f", median, e)
    }' "$results"
}
row() {  # label p figure floor-label floor-id
  line="| $1 |"
  for column in $columns; do line="$line $(cell "$column" "$2" "$3") |"; done
  floor=""
  [ -z "$5" ] || floor="$4 $(cell floor 0 "$5")"
  echo "$line $floor |"
}
echo
echo "Peers, $rounds interleaved rounds, medians over rounds / best (lowest µs, highest GB/s); $(date -u +%Y-%m-%d), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| figure | ours shm | ours default | MulticoreBSP | BSPonMPI shm | BSPonMPI tcp | floor, same run |"
echo "|---|---|---|---|---|---|---|"
row "p = 2 empty superstep, µs" 2 empty_us "shm ping-pong" pingpong_spin_us
row "p = 2 4-byte put superstep, µs" 2 put4_us "" ""
row "p = 2 1400-byte h-relation, µs" 2 put1400_us "" ""
row "p = 2 one 8 MiB put, GB/s" 2 put8mib_gbps "memcpy 8 MiB" memcpy_8mib_gbps
row "p = 2 one 8 MiB get, GB/s" 2 get8mib_gbps "" ""
row "p = 4 empty superstep ($cores cores), µs" 4 empty_us "futex wake-up" pingpong_futex_us
if [ -s "$notes" ]; then
  echo
  sed 's/^/- /' "$notes"
fi
echo
echo "binaries and logs: $work"

if [ -n "$npb_mpi" ]; then
  echo
  set -- --npb-mpi "$npb_mpi" --class "$nas_class" --rounds "$rounds"
  [ -z "$nas_benchmarks" ] || set -- "$@" --benchmarks "$nas_benchmarks"
  [ "$build" = 1 ] || set -- "$@" --no-build --bin "$bin"
  tools/nas_compare.sh "$@"
else
  echo
  echo "- NPB-MPI: not given (--npb-mpi DIR or NPB_MPI=DIR): no NAS against MPI in this run."
fi
