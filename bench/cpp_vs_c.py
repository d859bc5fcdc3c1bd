#!/usr/bin/env python3
"""bench/cpp_vs_c.py: the C++ interface against the C calls, in one run: bench/cpp_vs_c
(put, get, send and empty supersteps, g and l, each written both ways and alternated
superstep by superstep; with the C++ interface's checks and without them) at p = 2 and 4 over shm and udp, then NAS IS in C (nas/is) and on
the C++ interface (nas/is/is_cpp) in interleaved pairs, classes S, W and A at p = 2 and 4 over
shm and udp. Micro-benchmarks: ratios of means of the lowest 90% of samples and of minima;
NAS: ratios of medians, the median of each adjacent pair's ratio, and of minima (the cost
without interference from other jobs on a shared machine). Prints
markdown tables (docs/figures.md has one run's).

Usage (from the workspace root, after `bazel build -c opt //bench:cpp_vs_c
//bench:cpp_vs_c_unchecked //nas/is:is //nas/is:is_cpp //bsplib:bsprun`):
  python3 bench/cpp_vs_c.py [--procs=2,4] [--transports=shm,udp] [--rounds=15]
                            [--pairs=11] [--classes=S,W,A] [--nas-procs=2,4] [--nas-transports=shm,udp]
"""
import argparse
import re
import statistics
import subprocess
import sys

BSPRUN = "bazel-bin/bsplib/bsprun"


def run(argv, timeout=600):
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        sys.exit(f"cpp_vs_c.py: {' '.join(argv)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def micro(procs, transports, rounds, binary, title):
    print(f"\n{title}\n")
    print("| p | transport | kernel | h | C µs | C++ µs | C++/C (means) | C++/C (minima) |")
    print("|---|---|---|---|---|---|---|---|")
    for p in procs:
        for transport in transports:
            out = run([BSPRUN, "-n", str(p), f"--transport={transport}", binary, f"--rounds={rounds}"])
            for line in out.splitlines():
                if line.startswith("#") or line.startswith("kernel"):
                    continue
                fields = line.split()
                if fields[0] in ("g", "l"):  # "g (us/word)" / "l (us)": no h column
                    name = " ".join(fields[:2])
                    c, cpp, ratio = fields[2:5]
                    h, low = "", ""
                else:
                    name, h, c, cpp, ratio, low = fields[:6]
                print(f"| {p} | {transport} | {name} | {h} | {c} | {cpp} | {ratio} | {low} |")
            sys.stdout.flush()


def nas_time(binary, klass, procs, transport):
    out = run([BSPRUN, "-n", str(procs), f"--transport={transport}", binary, f"--class={klass}"])
    if not re.search(r"Verification\s*=\s*SUCCESSFUL", out):
        sys.exit(f"cpp_vs_c.py: {binary} class {klass} did not verify:\n{out}")
    # The report prints the time with two decimals (0.00 for class S); Mop/s has more
    # digits: time = 10 rankings x total keys / (Mop/s x 1e6).
    keys = int(re.search(r"Size\s*=\s*([0-9]+)", out).group(1))
    mops = float(re.search(r"Mop/s total\s*=\s*([0-9.]+)", out).group(1))
    return 10 * keys / (mops * 1e6)


def nas(classes, pairs, procs_list, transports):
    print(f"\n| IS class | p | transport | C s (median of {pairs}) | C++ s | C++/C (medians) | C++/C (median of"
          " pairs) | C++/C (minima) |")
    print("|---|---|---|---|---|---|---|---|")
    for procs, transport, klass in [(p, t, k) for p in procs_list for t in transports for k in classes]:
        c, cpp = [], []
        for i in range(pairs):
            order = [("nas/is/is", c), ("nas/is/is_cpp", cpp)]
            if i % 2:
                order.reverse()
            for binary, times in order:
                times.append(nas_time("bazel-bin/" + binary, klass, procs, transport))
        mc, mcpp = statistics.median(c), statistics.median(cpp)
        paired = statistics.median(b / a for a, b in zip(c, cpp))
        print(f"| {klass} | {procs} | {transport} | {mc:.4f} | {mcpp:.4f} | {mcpp / mc:.3f} | {paired:.3f} |"
              f" {min(cpp) / min(c):.3f} |")
        sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--procs", default="2,4")
    parser.add_argument("--transports", default="shm,udp")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--pairs", type=int, default=11)
    parser.add_argument("--classes", default="S,W,A")
    parser.add_argument("--nas-procs", default="2,4")
    parser.add_argument("--nas-transports", default="shm,udp")
    args = parser.parse_args()
    procs, transports = [int(p) for p in args.procs.split(",")], args.transports.split(",")
    micro(procs, transports, args.rounds, "bazel-bin/bench/cpp_vs_c", "C++ interface with its checks (the default):")
    micro(procs, transports, args.rounds, "bazel-bin/bench/cpp_vs_c_unchecked", "With -DBSP_CPP_CHECKS=0:")
    nas(args.classes.split(","), args.pairs, [int(p) for p in args.nas_procs.split(",")], args.nas_transports.split(","))


if __name__ == "__main__":
    main()
