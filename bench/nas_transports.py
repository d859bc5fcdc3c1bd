#!/usr/bin/env python3
"""bench/nas_transports.py: NAS benchmarks over several transports and process counts on
this host, in interleaved rounds (every benchmark, p and transport once per round, in
turn), so a loaded machine's load falls on all columns alike. Prints, per p, a table of
median seconds (NAS "Time in seconds") per benchmark and transport, the rounds' values,
and which transport was fastest; a run that does not verify counts as failed ("F").

  python3 bench/nas_transports.py --class W --procs 2,4 --rounds 3 \
      --transports shm,shm+tcp,tcp,udp,nic --benchmarks bt,sp,lu,mg,cg,ft,is,ep

--bin DIR: where bsplib/bsprun and nas/B/B are (default bazel-bin; build with -c opt).
--bin may be given twice (A,B): each run then goes A then B, columns "T@A" and "T@B"
(ratios of two builds in the same run). --extra: more bsprun options for every run; a
transport may carry options of its own ("shm --spin-us=0"). BT and SP run only where p is
a square ("-" elsewhere).
"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time

TIME = re.compile(r"Time in seconds\s*=\s*([\d.]+)")
VERIFIED = re.compile(r"Verification\s*=\s*SUCCESSFUL")


def run(bindir, bench, cls, procs, column, extra, timeout):
    transport, *options = column.split()  # "shm --spin-us=0": a column with options of its own
    command = [str(bindir / "bsplib" / "bsprun"), "-n", str(procs), f"--transport={transport}", *extra, *options,
               str(bindir / "nas" / bench / bench), f"--class={cls}"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    match = TIME.search(done.stdout)
    if done.returncode != 0 or not match or not VERIFIED.search(done.stdout):
        sys.stderr.write(f"failed: {' '.join(command)}\n{done.stderr[-600:]}\n")
        return None
    return float(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--class", dest="cls", default="W")
    parser.add_argument("--procs", default="2,4")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--transports", default="shm,shm+tcp,tcp,udp,nic")
    parser.add_argument("--benchmarks", default="bt,sp,lu,mg,cg,ft,is,ep")
    parser.add_argument("--bin", default="bazel-bin", help="DIR or DIR_A,DIR_B")
    parser.add_argument("--extra", default="")
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    bins = [pathlib.Path(b).resolve() for b in args.bin.split(",")]
    procs = [int(p) for p in args.procs.split(",")]
    transports = args.transports.split(",")
    if os.geteuid() != 0 and "nic" in transports:
        print("note: nic skipped (raw frames need root)", file=sys.stderr)
        transports.remove("nic")
    columns = [(t, b) for t in transports for b in bins]

    def name(column):
        t, b = column
        return t if len(bins) == 1 else f"{t}@{b.name}"

    results = {}  # (p, bench, column) -> [seconds or None]
    loads = []
    for r in range(args.rounds):
        loads.append(open("/proc/loadavg").read().split()[0])
        for p in procs:
            for bench in args.benchmarks.split(","):
                if bench in ("bt", "sp") and round(p ** 0.5) ** 2 != p:
                    continue  # their multi-partition decomposition needs a square p
                # One column later each round: the first run after a large benchmark is the
                # slow one (the kernel reclaiming its memory), never always the same column.
                for column in columns[r % len(columns):] + columns[:r % len(columns)]:
                    seconds = run(column[1], bench, args.cls, p, column[0], args.extra.split(), args.timeout)
                    results.setdefault((p, bench, column), []).append(seconds)
                    print(f"round {r + 1} p={p} {bench} {name(column)}: {seconds}", file=sys.stderr, flush=True)
    loads.append(open("/proc/loadavg").read().split()[0])
    print(f"class {args.cls}, {args.rounds} interleaved rounds, load average at each round's start and "
          f"the end: {' '.join(loads)}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    for p in procs:
        print(f"\np = {p}: median s (rounds)")
        print("| benchmark | " + " | ".join(name(c) for c in columns) + " | fastest |")
        print("|---" * (len(columns) + 2) + "|")
        for bench in args.benchmarks.split(","):
            cells, medians = [], {}
            if (p, bench, columns[0]) not in results:
                continue
            for column in columns:
                values = results[(p, bench, column)]
                good = [v for v in values if v is not None]
                text = " / ".join("F" if v is None else f"{v:.2f}" for v in values)
                if len(good) == len(values):
                    medians[name(column)] = statistics.median(good)
                    cells.append(f"{medians[name(column)]:.2f} ({text})")
                else:
                    cells.append(f"F ({text})")
            fastest = min(medians, key=medians.get) if medians else "-"
            print(f"| {bench.upper()} | " + " | ".join(cells) + f" | {fastest} |")


if __name__ == "__main__":
    main()
