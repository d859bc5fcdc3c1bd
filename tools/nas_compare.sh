#!/bin/sh
# tools/nas_compare.sh: the project's main job (README quick start): builds BSPlib and the
# NAS benchmarks, then runs them on local processes over every transport that works here
# and prints paper 001's Tables 1-3 (nas/compare.py; options pass through, e.g.
# --class A --procs 8 --benchmarks cg,mg). Results land in results/. Across hosts:
# --hostfile FILE [--rsh CMD] [--in-netns NS] (nas/compare.py says how).
set -e
cd "$(dirname "$0")/.."
tools/setup.sh
bazel build //bsplib:bsprun //nas/...
exec python3 nas/compare.py --bin bazel-bin "$@"
