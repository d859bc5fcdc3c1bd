#!/bin/bash
# experiments/sync_scaling.sh: superstep cost against the process count. For every
# network (lo; with --cluster an emulated cluster of 8 hosts), transport, sync protocol
# (bsprun --sync=) and p, runs experiments/sync_scaling (an empty bsp_sync, and a superstep in
# which each process puts one word to pid + 1: mean, median per superstep, frames sent
# per process per superstep, CPU time and context switches per process per superstep) and
# appends its rows to OUT/sync_scaling.csv. Then the model's calibration (experiments/sync_model.py
# calibrate: layer_pingpong, sync_scaling at p = 2 on two cores and on one, both protocols
# at p = 4, 8 and 16 with the pages their processes touch, experiments/wake_cost spinning and
# blocking, with working sets, rounds and all-to-all) into OUT/calibration.csv, calibration_runs.csv and
# wake_cost.csv, and the model, the table (OUT/sync_scaling.md) and the plots
# (OUT/sync_scaling_*.png/.svg): one command regenerates everything.
# Every run has a time limit; one that fails or runs out is listed in OUT/failures.csv
# (its log in OUT/logs/) and the others go on. Run from anywhere in the workspace:
#   experiments/sync_scaling.sh                        lo: p = 2..64, udp nic tcp, dense and sparse
#   experiments/sync_scaling.sh --long                 also p = 128 and 256 on lo (long on 2 cores)
#   experiments/sync_scaling.sh --cluster              also on 8 namespace hosts (root), p = 2..64
#   experiments/sync_scaling.sh --quick                tiny budgets: see that everything works
# Options: --procs=2,4,8  --cluster-procs=2,...,64  --transports=udp,nic,tcp
#   --syncs=dense,sparse  --no-lo  --budget-ms=2000 (per kind and run)  --timeout=SECONDS
#   (per run; default 120 + 4 × budget)  --out=results/sync_scaling  --append (keep the old
#   CSV, add rows)  --no-calibrate  --no-model  --build (bazel build first)
#   --bazel="bazel --output_base=..."  --extra="bsprun options for every run"
set -u
cd "$(dirname "$0")/.."
procs="2 4 8 16 32 64" cluster_procs="2 4 8 16 32 64" transports="udp nic tcp" syncs="dense sparse"
networks="lo" budget=2000 limit="" out=results/sync_scaling append=0 calibrate=1 model=1 build=0
bazel_cmd=bazel extra="" quick=0 long=0 hosts=8
for arg in "$@"; do
  case "$arg" in
    --procs=*) procs=${arg#*=}; procs=${procs//,/ } ;;
    --cluster-procs=*) cluster_procs=${arg#*=}; cluster_procs=${cluster_procs//,/ } ;;
    --long) long=1 ;;
    --transports=*) transports=${arg#*=}; transports=${transports//,/ } ;;
    --syncs=*) syncs=${arg#*=}; syncs=${syncs//,/ } ;;
    --cluster) networks="$networks cluster" ;;
    --no-lo) networks=${networks/lo/} ;;
    --budget-ms=*) budget=${arg#*=} ;;
    --timeout=*) limit=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    --append) append=1 ;;
    --no-calibrate) calibrate=0 ;;
    --no-model) model=0 ;;
    --build) build=1 ;;
    --bazel=*) bazel_cmd=${arg#*=} ;;
    --extra=*) extra=${arg#*=} ;;
    --quick) quick=1 ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "sync_scaling.sh: unknown option $arg (--help lists them)" >&2; exit 2 ;;
  esac
done
[ $long = 1 ] && procs="$procs 128 256"
if [ $quick = 1 ]; then budget=100; fi
[ -n "$limit" ] || limit=$((120 + 4 * budget / 1000))
if [ $build = 1 ]; then
  $bazel_cmd build //experiments:sync_scaling //bench:layer_pingpong //experiments:wake_cost //bsplib:bsprun || { echo "sync_scaling.sh: build failed" >&2; exit 1; }
fi
bin=bazel-bin
bsprun=$bin/bsplib/bsprun
program=$bin/experiments/sync_scaling
[ -x "$bsprun" ] && [ -x "$program" ] || { echo "sync_scaling.sh: build first (bazel build //experiments:sync_scaling //bench:layer_pingpong //experiments:wake_cost //bsplib:bsprun, or --build)" >&2; exit 1; }
mkdir -p "$out/logs"
csv=$out/sync_scaling.csv
header="network,sync,transport,p,kind,supersteps,mean_us,median_us,min_us,p90_us,data_frames_per_proc,ack_frames_per_proc,nack_frames_per_proc,retransmissions_per_proc,frames_per_proc,max_frames_per_proc,data_received_per_proc,cpu_us_per_proc,voluntary_switches_per_proc,involuntary_switches_per_proc,load1"
if [ $append = 0 ] || [ ! -s "$csv" ]; then echo "$header" >"$csv"; fi
[ -s "$out/failures.csv" ] && [ $append = 1 ] || echo "network,sync,transport,p,exit_status,last_error_line" >"$out/failures.csv"

cluster=""  # the prefix of the cluster, once up
sshd_dir=""
cleanup() {
  if [ -n "$cluster" ]; then tools/cluster.sh down --prefix "$cluster" >/dev/null 2>&1; fi
  [ -n "$sshd_dir" ] && rm -rf "$sshd_dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The cluster: 8 hosts, each with its own sshd, so that several processes run per host
# (bsprun --netns places one per namespace); bsprun runs inside host 0 with a host file.
cluster_up() {
  cluster="ss$$"; cluster=${cluster:0:6}
  sshd_dir=$(mktemp -d /tmp/sync_scaling_sshd.XXXXXX)
  echo "== cluster $cluster: $hosts hosts (tools/cluster.sh up $hosts --sshd)"
  tools/cluster.sh up $hosts --prefix "$cluster" --sshd "$sshd_dir" >"$out/logs/cluster_up.log" 2>&1 ||
    { echo "sync_scaling.sh: cluster did not come up: $(tail -2 "$out/logs/cluster_up.log")" >&2; cluster=""; return 1; }
}
# A host file for p processes over the cluster's hosts, spread evenly (pids in blocks).
hostfile_for() {  # p
  local p=$1 file=$sshd_dir/hostfile.$1 i=0 used=$hosts
  [ "$p" -lt $hosts ] && used=$p
  : >"$file"
  while [ $i -lt $used ]; do
    echo "10.77.0.$((i + 1)) slots=$(( (p + used - 1 - i) / used ))" >>"$file"
    i=$((i + 1))
  done
  echo "$file"
}

# One run of experiments/sync_scaling; its rows go to the CSV prefixed by network and sync.
run() {  # network sync transport p
  local network=$1 sync=$2 transport=$3 p=$4 log status load
  log="$out/logs/${network}_${sync}_${transport}_p${p}.log"
  load=$(cut -d' ' -f1 /proc/loadavg)
  printf '%-8s %-7s %-4s p=%-4s (load %s) ... ' "$network" "$sync" "$transport" "$p" "$load"
  local args=(-n "$p" --transport="$transport" --sync="$sync" $extra "$PWD/$program" --budget-ms="$budget")
  local run_limit=$limit
  [ $quick = 1 ] && args+=(--min-supersteps=5 --warmup=3)
  # 128 and more processes on 2 cores: a dense superstep takes a large part of a second.
  [ $quick = 0 ] && [ "$p" -ge 128 ] && args+=(--min-supersteps=10 --warmup=5) && run_limit=$((limit * 4))
  local start=$SECONDS
  if [ "$network" = lo ]; then
    timeout -k 5 "$run_limit" "$bsprun" "${args[@]}" >"$log" 2>&1
  else
    timeout -k 5 "$run_limit" ip netns exec "${cluster}0" "$PWD/$bsprun" --hostfile="$(hostfile_for "$p")" \
      --rsh="ssh -F $sshd_dir/ssh_config" "${args[@]}" >"$log" 2>&1
  fi
  status=$?
  if [ $status = 0 ] && grep -q "^$transport,$p,neighbour," "$log"; then
    grep -E "^$transport,$p,(empty|neighbour)," "$log" | sed "s/^/$network,$sync,/; s/\$/,$load/" >>"$csv"
    echo "$(( SECONDS - start )) s: $(grep -E "^$transport,$p," "$log" | awk -F, '{ printf "%s %s us (%s frames/proc)  ", $3, $5, $13 }')"
  else
    [ $status = 124 ] && reason="timed out after $run_limit s" || reason=$(grep -v '^\s*$' "$log" | tail -1 | tr -d ',')
    echo "FAILED ($status): $reason"
    echo "$network,$sync,$transport,$p,$status,$reason" >>"$out/failures.csv"
  fi
}

for network in $networks; do
  list=$procs
  if [ "$network" = cluster ]; then
    [ "$(id -u)" = 0 ] || { echo "sync_scaling.sh: --cluster needs root; skipped" >&2; continue; }
    cluster_up || continue
    list=$cluster_procs
  fi
  echo "== $network: transports $transports, protocols $syncs, p = $list, ${budget} ms per kind"
  for p in $list; do
    for transport in $transports; do
      for sync in $syncs; do run "$network" "$sync" "$transport" "$p"; done
    done
  done
done

if [ $calibrate = 1 ]; then
  echo "== calibration (experiments/sync_model.py calibrate)"
  timeout -k 5 3600 python3 experiments/sync_model.py calibrate --out="$out" --transports="${transports// /,}" \
    --networks="$(echo $networks | tr ' ' ',')" \
    --budget-ms="$budget" ${cluster:+--netns="$cluster" --sshd-dir="$sshd_dir"} || echo "sync_scaling.sh: calibration failed" >&2
fi
cleanup; cluster=""; sshd_dir=""
if [ $model = 1 ]; then
  echo "== model, table and plots"
  python3 experiments/sync_model.py report --out="$out" || echo "sync_scaling.sh: the model's report failed" >&2
fi
echo "results: $csv, $out/sync_scaling.md, $out/sync_scaling_*.png; failures: $(($(wc -l <"$out/failures.csv") - 1))"
