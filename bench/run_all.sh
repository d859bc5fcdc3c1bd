#!/bin/bash
# bench/run_all.sh: paper 001's micro-benchmarks (section 3.2) for every transport, one
# command. Builds the benchmarks, runs each over every transport bsprun offers (and every
# ack policy of the reliable layer, for the transports that use it) on lo and, when asked
# and root, across a namespace cluster made with tools/cluster.sh (unshaped, and shaped to
# 100mbit), appends the rows to results/bench/*.csv, plots them with gnuplot
# (bench/plot.sh) and prints the per-layer cost tables (bench/layer_table.sh). A run that
# fails or times out is reported (results/bench/failures.csv, its log in logs/) and the
# others go on. Run from anywhere in the workspace:
#   bench/run_all.sh                       everything on lo (a few minutes)
#   bench/run_all.sh --quick               tiny counts, to see that it all works
#   bench/run_all.sh --only=spray,params   some benchmarks (roundtrip bandwidth spray params layers)
#   bench/run_all.sh --cluster --shaped    also on a namespace cluster, unshaped and 100mbit
# Options: --transports=tcp,udp,nic  --ack-policies=buffer,every,pupa  --no-lo  --rate=100mbit
#   --stats (bsprun's packet counters, printed and kept in the logs)  --out=results/bench
#   --timeout=SECONDS (per run)  --procs=2,4,8 (bsp_params)  --spray-via=send,put
#   --no-build  --no-plots
#   --roundtrip-args="..." --bandwidth-args="..." --spray-args="..." --params-args="..."
#   (appended to that benchmark's command line; see the top of bench/bsp_*.cc)
set -u
cd "$(dirname "$0")/.."
benchmarks="roundtrip bandwidth spray params layers"
transports="" ack_policies="buffer every pupa" networks="lo" rate=100mbit
quick=0 stats=0 out=results/bench limit=300 procs="2 4 8" build=1 plots=1 spray_via="send put"
declare -A extra=([roundtrip]="" [bandwidth]="" [spray]="" [params]="")
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    --only=*) benchmarks=${arg#*=}; benchmarks=${benchmarks//,/ } ;;
    --transports=*) transports=${arg#*=} ;;
    --ack-policies=*) ack_policies=${arg#*=}; ack_policies=${ack_policies//,/ } ;;
    --cluster) networks="$networks cluster" ;;
    --shaped) networks="$networks shaped" ;;
    --no-lo) networks=${networks/lo/} ;;
    --rate=*) rate=${arg#*=} ;;
    --stats) stats=1 ;;
    --out=*) out=${arg#*=} ;;
    --timeout=*) limit=${arg#*=} ;;
    --procs=*) procs=${arg#*=}; procs=${procs//,/ } ;;
    --spray-via=*) spray_via=${arg#*=}; spray_via=${spray_via//,/ } ;;
    --no-build) build=0 ;;
    --no-plots) plots=0 ;;
    --roundtrip-args=* | --bandwidth-args=* | --spray-args=* | --params-args=*)
      name=${arg%%-args=*}; extra[${name#--}]=${arg#*=} ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run_all.sh: unknown option $arg (--help lists them)" >&2; exit 2 ;;
  esac
done

if [ $build = 1 ]; then
  bazel build //bench/... //bsplib:bsprun || { echo "run_all.sh: build failed" >&2; exit 1; }
fi
bin=bazel-bin
bsprun=$bin/bsplib/bsprun
[ -n "$transports" ] || transports=$("$bsprun" --help 2>&1 | sed -n 's/^transports built in: //p' | tr -d ' ')
transports=${transports//,/ }
mkdir -p "$out/logs"
echo "benchmark,network,transport,ack_policy,p,exit_status,last_error_line" >"$out/failures.csv"

# Defaults per benchmark, made smaller by --quick and on the 100mbit network.
defaults() {  # benchmark network
  local args=""
  case "$1" in
    roundtrip) [ $quick = 1 ] && args="--repetitions=100 --warmup=10" || args="--repetitions=2000"
               [ "$2" = shaped ] && [ $quick = 0 ] && args="--repetitions=300" ;;
    bandwidth) [ $quick = 1 ] && args="--repetitions=1 --max-count=2000 --bytes=1048576"
               [ "$2" = shaped ] && args="--repetitions=1 --bytes=2097152" ;;
    spray) [ $quick = 1 ] && args="--max-i=1000 --messages=2000 --max-repetitions=3"
           [ "$2" = shaped ] && [ $quick = 0 ] && args="--messages=4000 --max-repetitions=10" ;;
    params) [ $quick = 1 ] && args="--h-max=256 --iterations=2 --daxpy-iterations=2000" ;;
  esac
  echo "$args"
}

# The namespace cluster for a network ("" on lo); built on first use, removed at exit.
cluster_prefix() {
  case "$1" in lo) echo "" ;; cluster) echo "bbc$$" | cut -c1-8 ;; shaped) echo "bbs$$" | cut -c1-8 ;; esac
}
cluster_up() {  # network
  local prefix; prefix=$(cluster_prefix "$1")
  [ -n "$prefix" ] || return 0
  if [ "$(id -u)" != 0 ]; then echo "run_all.sh: --$1 needs root (network namespaces); skipped" >&2; return 1; fi
  local shaping=(); [ "$1" = shaped ] && shaping=(--rate "$rate")
  built_clusters="$built_clusters $1"
  tools/cluster.sh up 8 --prefix "$prefix" "${shaping[@]}" >&2 || { echo "run_all.sh: could not build the $1 cluster" >&2; return 1; }
}
built_clusters=""
cluster_down() {
  for network in $built_clusters; do tools/cluster.sh down --prefix "$(cluster_prefix "$network")" >&2; done
  built_clusters=""
}
trap cluster_down EXIT

# Appends the CSV block number $3 (blocks are separated by blank lines) of file $1 to
# results file $2, each row prefixed by network and ack policy ($4, $5).
append_rows() {
  awk -v want="$3" -v prefix="$4,$5" -v target="$2" '
    /^$/ { ++block; next }
    block + 1 != want { next }
    !seen_header++ { if ((getline existing < target) <= 0) print "network,ack_policy," $0 > target; close(target); next }
    { print prefix "," $0 >> target }' "$1"
}

# Runs one BSPlib benchmark: benchmark network transport ack_policy nprocs [variant
# argument, e.g. --via=put, also part of the run's name].
run_one() {
  local benchmark=$1 network=$2 transport=$3 policy=$4 nprocs=$5 variant=${6:-}
  local label="${benchmark}_${network}_${transport}_${policy}_p${nprocs}${variant:+_${variant#--*=}}"
  local log=$out/logs/$label.log output=$out/logs/$label.out
  local command=("$bsprun" -n "$nprocs" --transport="$transport")
  [ "$policy" != - ] && command+=(--ack-policy="$policy")
  local prefix; prefix=$(cluster_prefix "$network")
  [ -n "$prefix" ] && command+=(--netns="$prefix")
  [ $stats = 1 ] && command+=(--stats)
  # shellcheck disable=SC2206  # the argument strings are word lists on purpose
  command+=("$bin/bench/bsp_$benchmark" $variant $(defaults "$benchmark" "$network") ${extra[$benchmark]})
  printf '  %-44s' "$label" >&2
  local start=$SECONDS
  timeout "$limit" "${command[@]}" >"$output" 2>"$log"
  local status=$?
  if [ "$benchmark" = params ]; then
    append_rows "$output" "$out/params_hrel.csv" 1 "$network" "$policy"
    append_rows "$output" "$out/params.csv" 2 "$network" "$policy"
  else
    append_rows "$output" "$out/$benchmark.csv" 1 "$network" "$policy"
  fi
  if [ $status = 0 ]; then
    echo "ok ($((SECONDS - start)) s)" >&2
  else
    local why; why=$(grep -v '^ ' "$log" | tail -n 1 | tr ',' ';')
    [ $status = 124 ] && why="timed out after $limit s (deadlock?) ${why}"
    echo "FAILED (exit $status): $why" >&2
    echo "$benchmark${variant:+ $variant},$network,$transport,$policy,$nprocs,$status,$why" >>"$out/failures.csv"
  fi
  if [ $stats = 1 ]; then sed -n '/statistics/,$p' "$log" | sed 's/^/      /' >&2; fi
}

# Ack policies that apply to a transport: tcp's reliability is the kernel's.
policies_of() { if [ "$1" = tcp ]; then echo -; else echo "$ack_policies"; fi; }

for benchmark in $benchmarks; do  # this run's results replace the previous ones
  case "$benchmark" in
    params) rm -f "$out/params.csv" "$out/params_hrel.csv" ;;
    *) rm -f "$out/$benchmark.csv" ;;
  esac
done
for network in $networks; do
  cluster_up "$network" || continue
  echo "== network $network" >&2
  for benchmark in $benchmarks; do
    variants=-
    case "$benchmark" in
      layers)  # bare transport | reliable layer | BSPlib, per transport (bench/layer_table.sh)
        layer_args=(--out="$out" --transports="${transports// /,}" --timeout=$((limit < 120 ? limit : 120)) --append)
        [ $quick = 1 ] && layer_args+=(--quick)
        [ $stats = 1 ] && layer_args+=(--stats)
        [ -n "$(cluster_prefix "$network")" ] && layer_args+=(--netns="$(cluster_prefix "$network")" --network="$network")
        echo "== per-layer cost ($network)" >&2
        bench/layer_table.sh "${layer_args[@]}"
        continue ;;
      params) counts=$procs ;;
      spray) counts=2 variants=$spray_via ;;
      roundtrip | bandwidth) counts=2 ;;
      *) echo "run_all.sh: no benchmark $benchmark" >&2; exit 2 ;;
    esac
    for transport in $transports; do
      for policy in $(policies_of "$transport"); do
        for nprocs in $counts; do
          for variant in $variants; do
            run_one "$benchmark" "$network" "$transport" "$policy" "$nprocs" "$([ "$variant" = - ] || echo "--via=$variant")"
          done
        done
      done
    done
  done
  cluster_down  # one cluster at a time: they would compete for the same cores
done

[ $plots = 1 ] && bench/plot_all.sh "$out"
bench/summary.sh "$out"
