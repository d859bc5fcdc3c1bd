#!/usr/bin/env python3
"""experiments/nas_ab.py: two builds' NAS times in interleaved pairs (before, after, before, ...),
so that the VM's drift from minute to minute falls on both alike. For each benchmark and
transport it prints the median (best) seconds of each build and the ratio of the medians,
as markdown. A build is a directory holding bsprun and nas/ (copied from bazel-bin), or
"bazel-bin" for the workspace's own. Every run must verify; a failed one stops the script.

Run from the workspace root after `bazel build //nas/... //bsplib:bsprun`:
  python3 experiments/nas_ab.py --before=DIR [--after=bazel-bin] [--pairs=7] \
      [--benchmarks=cg,is,ft] [--transports=tcp,udp,nic,shm] [--class=A] [--procs=4]
"""
import argparse
import importlib.util
import os
import pathlib
import statistics
import subprocess
import sys

# nas/compare.py (tools/nas_compare.sh's) reads a run's report and finds a benchmark's binary.
_spec = importlib.util.spec_from_file_location(
    "nas_compare", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "nas", "compare.py"))
compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare)


def launcher(build):
    """bsprun of a build: bazel-bin keeps it under bsplib/, a copied build at its top."""
    for candidate in (os.path.join(build, "bsprun"), os.path.join(build, "bsplib", "bsprun")):
        if os.path.exists(candidate):
            return candidate
    sys.exit(f"nas_ab: no bsprun in {build}")


def run_once(build, benchmark, transport, problem_class, procs):
    binary = compare.benchmark_binary(pathlib.Path(build), benchmark)
    if binary is None:
        sys.exit(f"nas_ab: no {benchmark} in {build}/nas")
    command = [launcher(build), "-n", str(procs), f"--transport={transport}", str(binary), f"--class={problem_class}"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    output = result.stdout + result.stderr
    row = compare.parse(output)
    if result.returncode != 0 or "time_s" not in row or row.get("verification") != "SUCCESSFUL":
        sys.exit(f"nas_ab: {' '.join(command)} failed (exit {result.returncode}):\n{output[-2000:]}")
    return row["time_s"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", default="bazel-bin")
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--benchmarks", default="cg,is,ft")
    parser.add_argument("--transports", default="tcp,udp,nic,shm")
    parser.add_argument("--class", dest="problem_class", default="A")
    parser.add_argument("--procs", type=int, default=4)
    args = parser.parse_args()

    benchmarks = args.benchmarks.split(",")
    transports = args.transports.split(",")
    print(f"NAS class {args.problem_class}, p = {args.procs}, {args.pairs} interleaved pairs; "
          f"median (best) seconds, after / before of the medians")
    print()
    print("| benchmark | " + " | ".join(transports) + " |")
    print("|---|" + "---|" * len(transports))
    for benchmark in benchmarks:
        cells = []
        for transport in transports:
            times = {"before": [], "after": []}
            for _ in range(args.pairs):
                for name, build in (("before", args.before), ("after", args.after)):
                    times[name].append(run_once(build, benchmark, transport, args.problem_class, args.procs))
            before, after = statistics.median(times["before"]), statistics.median(times["after"])
            cells.append(f"{before:.2f} ({min(times['before']):.2f}) → {after:.2f} ({min(times['after']):.2f}): "
                         f"{after / before:.2f}×")
            print(f"  {benchmark} {transport}: before {times['before']} after {times['after']}", file=sys.stderr)
        print(f"| {benchmark.upper()} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
