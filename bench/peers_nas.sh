#!/bin/sh
# bench/peers_nas.sh: our NAS benchmarks beside NPB 3.4-MPI over Open MPI, in one run
# (tools/nas_compare.sh --npb-mpi DIR runs it). Per round and benchmark, interleaved: ours
# over shm, NPB-MPI over Open MPI's shared memory (its default), ours over tcp, NPB-MPI over
# Open MPI's TCP (OMPI_MCA_btl=tcp,self OMPI_MCA_osc=pt2pt), each round starting one column
# later. Prints a markdown table of the median "Time in seconds" over the rounds and the
# ratios ours / MPI (below 1: ours is faster); a run counts only when it reports
# "Verification = SUCCESSFUL".
#
# Usage: bench/peers_nas.sh --npb-mpi DIR [--class A] [--procs 4] [--rounds 3]
#                           [--benchmarks bt,sp,lu,mg,cg,ep,is,ft] [--bin DIR] [--timeout S]
#   --npb-mpi DIR   NPB3.4-MPI built in DIR: DIR/bin/NAME.CLASS.x (`make bt CLASS=A` ...)
#   --bin DIR       where our binaries are (default bazel-bin): DIR/bsplib/bsprun,
#                   DIR/nas/NAME/NAME
#   --timeout S     seconds per run (default 1800)
# When DIR holds no NPB binary for the class, the MPI columns are "n/a (not found)" with a
# note, and ours still run: that is not a failure. A benchmark one side has not built is
# left out with a note. As root the MPI runs get OMPI_ALLOW_RUN_AS_ROOT=1; more ranks than cores
# need OMPI_MCA_rmaps_base_oversubscribe=1, set here. --help prints this comment.
case " $* " in *" --help "* | *" -h "*) sed -n '2,/^[^#]/p' "$0" | sed '/^[^#]/d; s/^# \{0,1\}//'; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."

npb=""
class=A
procs=4
rounds=3
benchmarks=bt,sp,lu,mg,cg,ep,is,ft
bin=bazel-bin
timeout_s=1800
usage() { echo "usage: bench/peers_nas.sh --npb-mpi DIR [--class C] [--procs P] [--rounds N] [--benchmarks LIST] [--bin DIR] (--help)" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --*=*) option=${1%%=*}; value=${1#*=}; shift ;;
    --*) option=$1; [ $# -ge 2 ] || usage; value=$2; shift 2 ;;
    *) usage ;;
  esac
  case $option in
    --npb-mpi) npb=$value ;;
    --class) class=$value ;;
    --procs) procs=$value ;;
    --rounds) rounds=$value ;;
    --benchmarks) benchmarks=$value ;;
    --bin) bin=$value ;;
    --timeout) timeout_s=$value ;;
    *) echo "bench/peers_nas.sh: unknown option $option" >&2; usage ;;
  esac
done
[ -n "$npb" ] || usage
for number in "$procs" "$rounds" "$timeout_s"; do
  case $number in '' | *[!0-9]*) echo "bench/peers_nas.sh: '$number' is not a whole number" >&2; exit 2 ;; esac
done
case $class in S | W | A | B | C) ;; *) echo "bench/peers_nas.sh: class '$class' is not one of S W A B C" >&2; exit 2 ;; esac
bsprun=$bin/bsplib/bsprun
[ -x "$bsprun" ] || { echo "bench/peers_nas.sh: $bsprun is not built" >&2; exit 1; }
if [ "$(id -u)" = 0 ]; then
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_rmaps_base_oversubscribe
work=$(mktemp -d "${TMPDIR:-/tmp}/bsp-peers-nas.XXXXXX")
results=$work/results.txt   # lines: benchmark column seconds|failed
: > "$results"
notes=$work/notes.txt
: > "$notes"

mpi_state=""
if ! command -v mpirun > /dev/null 2>&1; then
  mpi_state="n/a (no mpirun)"
  echo "NPB-MPI: mpirun not found (Debian: openmpi-bin)." >> "$notes"
elif ! ls "$npb"/bin/*."$class".x > /dev/null 2>&1; then
  mpi_state="n/a (not found)"
  echo "NPB-MPI: no $npb/bin/*.$class.x (build NPB3.4-MPI there: make bt CLASS=$class ...)." >> "$notes"
fi
list=""
for name in $(echo "$benchmarks" | tr ',' ' '); do
  ours=$bin/nas/$name/$name
  mpi=$npb/bin/$name.$class.x
  if [ ! -x "$ours" ]; then
    echo "$name: ours not built ($ours): left out." >> "$notes"
  elif [ -z "$mpi_state" ] && [ ! -x "$mpi" ]; then
    echo "$name: NPB-MPI's $mpi not built: left out." >> "$notes"
  else
    list="$list $name"
  fi
done

run() {  # benchmark column round: one run, its time (or failed) appended to $results
  name=$1 column=$2 this_round=$3
  log=$work/$name-$column-round$this_round.log
  case $column in
    ours-shm) set -- "$bsprun" -n "$procs" --transport=shm "$bin/nas/$name/$name" --class="$class" ;;
    ours-tcp) set -- "$bsprun" -n "$procs" --transport=tcp "$bin/nas/$name/$name" --class="$class" ;;
    mpi-shm) set -- mpirun -n "$procs" "$npb/bin/$name.$class.x" ;;
    mpi-tcp) set -- env OMPI_MCA_btl=tcp,self OMPI_MCA_osc=pt2pt mpirun -n "$procs" "$npb/bin/$name.$class.x" ;;
  esac
  if timeout "$timeout_s" "$@" > "$log" 2>&1 && grep -q "Verification *= *SUCCESSFUL" "$log"; then
    seconds=$(sed -n 's/.*Time in seconds *= *\([0-9.]*\).*/\1/p' "$log" | head -n 1)
    echo "$name $column ${seconds:-failed}" >> "$results"
    echo " $column ${seconds}s" >&2
  else
    echo "$name $column failed" >> "$results"
    echo "$name over $column, round $this_round: failed or not verified, log $log" >> "$notes"
    echo " $column failed" >&2
  fi
}

columns="ours-shm mpi-shm ours-tcp mpi-tcp"
[ -z "$mpi_state" ] || columns="ours-shm ours-tcp"
round=1
while [ "$round" -le "$rounds" ]; do
  # Each round starts one column later: the first run after a large benchmark is the slow
  # one (FT's memory being reclaimed: EP at p = 4 2.1-3.0 s first after FT, 1.9-2.0 later),
  # so no column may always take that place.
  set -- $columns
  shift_by=$(((round - 1) % $#))
  while [ "$shift_by" -gt 0 ]; do
    first=$1
    shift
    set -- "$@" "$first"
    shift_by=$((shift_by - 1))
  done
  order="$*"
  for name in $list; do
    printf 'round %s/%s %s class %s p = %s:' "$round" "$rounds" "$name" "$class" "$procs" >&2
    for column in $order; do run "$name" "$column" "$round"; done
  done
  round=$((round + 1))
done

median() {  # benchmark column -> median seconds over the rounds, or empty
  awk -v b="$1" -v c="$2" '$1 == b && $2 == c && $3 != "failed" { n++; m[n] = $3 }
    END {
      if (n == 0) exit
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (m[j] < m[i]) { t = m[i]; m[i] = m[j]; m[j] = t }
      printf "%.2f", n % 2 ? m[(n + 1) / 2] : (m[n / 2] + m[n / 2 + 1]) / 2
    }' "$results"
}
cell() {  # benchmark column
  value=$(median "$1" "$2")
  if [ -n "$value" ]; then echo "$value"
  elif [ -n "$mpi_state" ] && [ "${2#mpi}" != "$2" ]; then echo "$mpi_state"
  elif grep -q "^$1 $2 failed" "$results"; then echo failed
  else echo "n/a"
  fi
}
ratio() {  # ours mpi
  awk -v a="$1" -v b="$2" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && b > 0) printf "%.2f", a / b; else printf "-" }'
}
echo
echo "NAS class $class, p = $procs, seconds: median of $rounds interleaved rounds; ours ÷ NPB 3.4-MPI over Open MPI"
echo "($(date -u +%Y-%m-%d), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| benchmark | ours shm | MPI shm | shm ÷ MPI | ours tcp | MPI tcp | tcp ÷ MPI |"
echo "|---|---|---|---|---|---|---|"
for name in $list; do
  a=$(cell "$name" ours-shm) b=$(cell "$name" mpi-shm) c=$(cell "$name" ours-tcp) d=$(cell "$name" mpi-tcp)
  echo "| $(echo "$name" | tr '[:lower:]' '[:upper:]') | $a | $b | $(ratio "$a" "$b") | $c | $d | $(ratio "$c" "$d") |"
done
if [ -s "$notes" ]; then
  echo
  sed 's/^/- /' "$notes"
fi
echo
echo "logs: $work"
