#!/bin/sh
# tools/nas_compare.sh: the project's main job (README quick start): builds BSPlib and the
# NAS benchmarks, then runs them on local processes over every transport that works here
# and prints paper 001's Tables 1-3 (nas/compare.py; options pass through, e.g.
# --class A --procs 8 --benchmarks cg,mg). Results land in results/. Across hosts:
# --hostfile FILE [--rsh CMD] [--in-netns NS] (nas/compare.py says how).
# --profile: every run also writes a superstep profile (bsprun --profile), one per
# benchmark and transport, RESULTS/profiles/BENCH-TRANSPORT.prof; after the tables, g and
# l are measured per transport (bench/bsp_params, RESULTS/profiles/params.csv) and bspprof
# draws each profile into RESULTS/profiles/BENCH-TRANSPORT/ (strata, prediction, g over
# time, call sites, trace.json), listed after the tables.
# --npb-mpi DIR: instead of the tables, our NAS over shm and tcp beside NPB 3.4-MPI built in
# DIR over Open MPI's shared memory and TCP, interleaved rounds (--rounds N, default 3),
# medians and ratios ours / MPI (bench/peers_nas.sh, whose options --class, --procs,
# --benchmarks, --rounds, --timeout apply); an absent DIR gives a note and ours alone.
# --no-build (with --npb-mpi): use what bazel-bin holds. --help prints this comment and
# nas/compare.py's options.
case " $* " in
  *" --help "* | *" -h "*)
    sed -n '2,/^[^#]/p' "$0" | sed '/^[^#]/d; s/^# \{0,1\}//'
    [ ! -f "$(dirname "$0")/../nas/compare.py" ] || python3 "$(dirname "$0")/../nas/compare.py" --help
    exit 0 ;;
esac
set -e
cd "$(dirname "$0")/.."
case " $* " in
  *" --npb-mpi "* | *" --npb-mpi="*)
    build=1
    for arg in "$@"; do
      shift
      if [ "$arg" = --no-build ]; then build=0; else set -- "$@" "$arg"; fi
    done
    if [ "$build" = 1 ]; then
      tools/setup.sh
      bazel build //bsplib:bsprun //nas/...
    fi
    exec bench/peers_nas.sh "$@" ;;
esac
profile=0
results=results
procs=4
for arg in "$@"; do
  case "$arg" in
    --profile) profile=1 ;;
    --results=*) results=${arg#*=} ;;
    --procs=*) procs=${arg#*=} ;;
  esac
done
# The space-separated forms (--results DIR, --procs N).
previous=""
for arg in "$@"; do
  case "$previous" in
    --results) results=$arg ;;
    --procs) procs=$arg ;;
  esac
  previous=$arg
done
tools/setup.sh
if [ "$profile" = 0 ]; then
  bazel build //bsplib:bsprun //nas/...
  exec python3 nas/compare.py --bin bazel-bin "$@"
fi

# --profile: the same run with every process profiled, then the graphs.
for arg in "$@"; do
  shift
  [ "$arg" = --profile ] || set -- "$@" "$arg"
done
# --strip=never: fastbuild would strip the debug information call sites are resolved with.
bazel build --strip=never //bsplib:bsprun //nas/... //tools/bspprof //bench:bsp_params
profiles="$results/profiles"
mkdir -p "$profiles"
rm -f "$profiles"/*.prof "$profiles"/*.prof.part*
BSP_PROFILE="$(cd "$profiles" && pwd)/%e-%t.prof"
# A profile is refused where a file is already there; these are this script's own, and a
# benchmark run again (another class, a repetition) replaces its profile.
BSP_OVERWRITE=1
export BSP_PROFILE BSP_OVERWRITE
status=0
python3 nas/compare.py --bin bazel-bin "$@" || status=$?
unset BSP_PROFILE BSP_OVERWRITE

# g and l of each profiled transport at this p (bspbench's method; a short run).
params="$profiles/params.csv"
echo "transport,p,r_mflops,g_flops_per_word,l_flops,g_us_per_word,l_us,h_max,iterations" > "$params"
for transport in $(ls "$profiles" | sed -n 's/^[a-z0-9]*-\(.*\)\.prof$/\1/p' | sort -u); do
  printf 'measuring g and l over %s (p = %s) ...' "$transport" "$procs" >&2
  if bazel-bin/bsplib/bsprun -n "$procs" --transport="$transport" bazel-bin/bench/bsp_params \
       --h-max=512 --iterations=5 > "$profiles/params-$transport.out" 2>&1; then
    tail -n 1 "$profiles/params-$transport.out" >> "$params"
    echo " done" >&2
  else
    echo " failed (see $profiles/params-$transport.out); its graphs have no prediction" >&2
  fi
done

echo
echo "Superstep profiles (bspprof; graphs: strata_bytes, strata_messages, prediction, g_over_time .png/.svg;"
echo "callsites.md; trace.json opens in ui.perfetto.dev):"
for file in "$profiles"/*.prof; do
  [ -e "$file" ] || continue
  name=$(basename "$file" .prof)
  if bazel-bin/tools/bspprof/bspprof "$file" --out="$profiles/$name" --params="$params" > "$profiles/$name.txt" 2>&1 ||
     bazel-bin/tools/bspprof/bspprof "$file" --out="$profiles/$name" > "$profiles/$name.txt" 2>&1; then
    printf '  %-24s %s\n' "$name" "$(sed -n 1p "$profiles/$name.txt" | sed 's/^[^:]*: //')"
    printf '  %-24s %s\n' "" "$profiles/$name/  ($(sed -n 2p "$profiles/$name.txt"))"
  else
    printf '  %-24s bspprof failed: %s\n' "$name" "$(tail -n 1 "$profiles/$name.txt")"
  fi
done
exit $status
