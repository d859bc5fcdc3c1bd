#!/usr/bin/env python3
"""nas/compare.py: the transport comparison of paper 001 (section 3.3): runs NAS benchmarks
written on BSPlib over several transports and prints its three tables side by side:
  Table 1  Mop/s per process;
  Table 2  computation time, communication time and slowdown against the fastest transport;
  Table 3  packet statistics (data received, explicit acks %, data dropped, duplicates).
Results also go to RESULTS/nas.csv, RESULTS/nas.json and PNG bar charts (gnuplot).

  python3 nas/compare.py --class W --procs 4 --benchmarks ep,cg,mg,ft,is --transports all

Across hosts: --hostfile FILE (Open MPI's format; the process count defaults to its slots;
shm alone is left out, with a note, when the processes span more than one host: shared
memory reaches one host only; the hybrids shm+tcp, shm+udp, shm+nic take its place),
--rsh CMD (the remote shell, default ssh), and for the emulated cluster of
tools/cluster.sh, --in-netns NS runs bsprun inside host namespace NS:
  tools/cluster.sh up 4 --sshd /tmp/cl --slots 2
  python3 nas/compare.py --hostfile /tmp/cl/hostfile --rsh "ssh -F /tmp/cl/ssh_config" --in-netns bsp0
"""
import argparse
import csv
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

FIELDS = {
    "time_s": r"Time in seconds\s*=\s*([\d.]+)",
    "mops_total": r"Mop/s total\s*=\s*([\d.]+)",
    "mops_per_process": r"Mop/s/process\s*=\s*([\d.]+)",
    "verification": r"Verification\s*=\s*(\w+)",
    "computation_s": r"Computation time \(s\)\s*=\s*([\d.]+) mean",
    "communication_s": r"Communication time \(s\)\s*=\s*([\d.]+) mean",
    "communication_max_s": r"Communication time \(s\)\s*=\s*[\d.]+ mean,\s*([\d.]+) max",
    "data_received": r"data received = (\d+)",
    "explicit_acks_percent": r"explicit acks = ([\d.]+)%",
    "data_dropped": r"data dropped = (\d+)",
    "duplicates": r"duplicates received = (\d+)",
}


def hostfile_hosts(path):
    """The hosts of an Open MPI hostfile in order, each with its slots (a host without slots=
    has one; a host listed again adds its slots to the first mention, as bsprun places)."""
    hosts = {}
    for line in pathlib.Path(path).read_text().splitlines():
        words = line.split("#")[0].split()
        if not words:
            continue
        found = [w.split("=", 1)[1] for w in words[1:] if w.split("=", 1)[0] in ("slots", "cpu", "count")]
        hosts[words[0]] = hosts.get(words[0], 0) + (int(found[0]) if found else 1)
    return list(hosts.items())


def hostfile_slots(path):
    """The slots of an Open MPI hostfile."""
    return sum(slots for _, slots in hostfile_hosts(path))


def hosts_used(path, procs):
    """How many of the hostfile's hosts get processes when procs fill the slots in order."""
    used, left = 0, procs
    for _, slots in hostfile_hosts(path):
        if left <= 0:
            break
        used += 1
        left -= slots
    return max(used, 1)


def available_transports(bsprun):
    text = subprocess.run([bsprun, "--help"], capture_output=True, text=True).stderr
    match = re.search(r"transports built in: (.*)", text)
    return [name.strip() for name in match.group(1).split(",")] if match else ["tcp"]


def usable(transport, hosts=1, hostfile=""):
    """None when a transport can run this job (of processes on `hosts` hosts), else why not."""
    if transport.endswith("nic") and os.geteuid() != 0:
        return "raw Ethernet frames need CAP_NET_RAW (run as root)"
    if transport == "shm" and hosts > 1:
        return f"shared memory reaches one host only, and the job spans {hosts} (shm+tcp and the like use it within each)"
    if transport.endswith("xdp"):
        if os.geteuid() != 0:
            return "XDP programs and AF_XDP sockets need root"
        # One process per interface queue: the network part of every process needs an
        # interface of its own (README, "Raw frames through AF_XDP").
        if not hostfile:
            return "xdp takes one process per interface: run across hosts (--hostfile, one slot each)"
        crowded = [host for host, slots in hostfile_hosts(hostfile) if slots > 1]
        if crowded:
            return f"xdp takes one process per interface, and the hostfile gives {crowded[0]} more than one slot"
    return None


def parse(output):
    row = {}
    for key, pattern in FIELDS.items():
        match = re.search(pattern, output)
        if match:
            value = match.group(1)
            row[key] = value if key == "verification" else float(value)
    return row


def table(title, columns, rows):
    widths = [max(len(str(c)), *(len(str(r[i])) for r in rows)) for i, c in enumerate(columns)]
    lines = [title, "  ".join(str(c).rjust(w) for c, w in zip(columns, widths))]
    lines += ["  ".join(str(v).rjust(w) for v, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)


def chart(path, title, ylabel, benchmarks, transports, values):
    """A clustered bar chart (one cluster per benchmark, one bar per transport)."""
    if not shutil.which("gnuplot"):
        return False
    data = path.with_suffix(".dat")
    with open(data, "w") as out:
        out.write("# benchmark " + " ".join(transports) + "\n")
        for b in benchmarks:
            out.write(b + " " + " ".join(str(values.get((b, t), 0)) for t in transports) + "\n")
    plots = ", ".join(
        f"'{data}' using {i + 2}:xtic(1) title '{t}'" for i, t in enumerate(transports))
    script = (f"set terminal png size 900,500; set output '{path}'; set title '{title}';"
              f"set ylabel '{ylabel}'; set style data histograms; set style histogram clustered gap 1;"
              f"set style fill solid 0.8 border -1; set key top left; set yrange [0:*];"
              f"plot {plots}")
    return subprocess.run(["gnuplot", "-e", script], capture_output=True).returncode == 0


def benchmark_binary(root, name):
    """The built binary of a benchmark: nas/<name>/<name> (every benchmark is the package
    //nas/<name>), or nas/<name> in builds copied from before that layout (experiments/nas_ab.py's
    --before); None when not built."""
    for path in (root / "nas" / name / name, root / "nas" / name):
        if path.is_file():
            return path
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--benchmarks", default="ep,is,cg,mg,ft,lu,bt,sp")
    parser.add_argument("--class", dest="problem_class", default="W")
    parser.add_argument("--procs", type=int, default=None, help="processes (default 4, or the hostfile's slots)")
    parser.add_argument("--hostfile", default="", help="run across the hosts of this Open MPI hostfile")
    parser.add_argument("--rsh", default="", help="remote shell for --hostfile (default: bsprun's, ssh)")
    parser.add_argument("--in-netns", default="", help="run bsprun in this network namespace (tools/cluster.sh)")
    parser.add_argument("--transports", default="all", help="comma-separated, or 'all' that work here")
    parser.add_argument("--bin", default="bazel-bin", help="where the built binaries are")
    parser.add_argument("--results", default="results", help="directory for CSV, JSON and PNG")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--extra", default="", help="more bsprun options, e.g. '--stats'")
    args = parser.parse_args()
    launch = []  # bsprun options that place the processes
    if args.hostfile:
        args.hostfile = os.path.abspath(args.hostfile)
        launch.append(f"--hostfile={args.hostfile}")
        if args.rsh:
            launch.append(f"--rsh={args.rsh}")
        if args.procs is None:
            args.procs = hostfile_slots(args.hostfile)
    if args.procs is None:
        args.procs = 4
    prefix = ["ip", "netns", "exec", args.in_netns] if args.in_netns else []

    root = pathlib.Path(args.bin)
    root = root.resolve()  # processes on other hosts find the same paths
    bsprun = str(root / "bsplib" / "bsprun")
    benchmarks = [b for b in args.benchmarks.split(",") if benchmark_binary(root, b)]
    missing = [b for b in args.benchmarks.split(",") if b not in benchmarks]
    if missing:
        print(f"note: not built, skipped: {', '.join(missing)}", file=sys.stderr)
    if not benchmarks:
        sys.exit("no NAS benchmark binaries found under " + str(root / "nas"))
    wanted = available_transports(bsprun) if args.transports == "all" else args.transports.split(",")
    if args.transports == "all" and not args.hostfile:
        # On one host a hybrid (shm+X) is shm alone: its columns would repeat shm's.
        wanted = [t for t in wanted if "+" not in t]
    hosts = hosts_used(args.hostfile, args.procs) if args.hostfile else 1
    transports = []
    for t in wanted:
        reason = usable(t, hosts, args.hostfile)
        if reason:
            print(f"note: transport {t} skipped: {reason}", file=sys.stderr)
        else:
            transports.append(t)

    results = {}
    runs = [(b, t) for b in benchmarks for t in transports]
    failures = 0
    for index, (b, t) in enumerate(runs, 1):
        command = [*prefix, bsprun, "-n", str(args.procs), *launch, f"--transport={t}", *args.extra.split(),
                   str(benchmark_binary(root, b)), f"--class={args.problem_class}"]
        print(f"[{index}/{len(runs)}] {b.upper()} class {args.problem_class} p={args.procs} over {t} ...",
              end="", file=sys.stderr, flush=True)
        started = time.time()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
            row = parse(done.stdout)
            ok = done.returncode == 0 and row.get("verification") == "SUCCESSFUL"
        except subprocess.TimeoutExpired:
            row, ok = {}, False
        row.update(benchmark=b.upper(), transport=t, problem_class=args.problem_class, procs=args.procs,
                   wall_s=round(time.time() - started, 2), ok=ok)
        results[(b, t)] = row
        failures += not ok
        status = row.get("verification", "FAILED") if ok else "FAILED"
        print(f" {row['wall_s']:.1f} s, {row.get('mops_per_process', 0):.2f} Mop/s/process, {status}",
              file=sys.stderr, flush=True)
        if not ok and "done" in locals():
            print(done.stderr[-2000:], file=sys.stderr)

    def value(b, t, key, fmt="{:.2f}"):
        v = results[(b, t)].get(key)
        return fmt.format(v) if isinstance(v, float) else "-"

    t1 = [[b.upper(), str(args.procs)] + [value(b, t, "mops_per_process") for t in transports] for b in benchmarks]
    print()
    print(table(f"Table 1. Mop/s per process, class {args.problem_class}", ["", "p"] + transports, t1))
    t2 = []
    for b in benchmarks:
        comm = {t: results[(b, t)].get("communication_s") for t in transports}
        known = [c for c in comm.values() if isinstance(c, float)]
        fastest = min(known) if known else None
        compute = [results[(b, t)].get("computation_s") for t in transports]
        compute = [c for c in compute if isinstance(c, float)]
        row = [b.upper(), str(args.procs), f"{min(compute):.2f}s" if compute else "-"]
        for t in transports:
            c = comm[t]
            row += [f"{c:.3f}s" if isinstance(c, float) else "-",
                    f"{c / fastest:.1f}" if isinstance(c, float) and fastest else "-"]
        t2.append(row)
    columns = ["", "p", "computation"] + [x for t in transports for x in (f"{t} comm", "slowdown")]
    print()
    print(table("Table 2. Computation time, communication time and slowdown against the fastest transport",
                columns, t2))
    t3 = []
    for b in benchmarks:
        for t in transports:
            r = results[(b, t)]
            t3.append([b.upper() + f" p={args.procs}", t, value(b, t, "data_received", "{:.0f}"),
                       value(b, t, "explicit_acks_percent") + "%", value(b, t, "data_dropped", "{:.0f}"),
                       value(b, t, "duplicates", "{:.0f}")])
    print()
    print(table("Table 3. Packet statistics", ["", "transport", "data rcvd", "explicit acks", "data dropped",
                                               "duplicates rcvd"], t3))

    out = pathlib.Path(args.results)
    out.mkdir(parents=True, exist_ok=True)
    rows = list(results.values())
    keys = sorted({k for r in rows for k in r})
    with open(out / "nas.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)
    (out / "nas.json").write_text(json.dumps(rows, indent=2))
    names = [b.upper() for b in benchmarks]
    mops = {(b.upper(), t): results[(b, t)].get("mops_per_process", 0) for b in benchmarks for t in transports}
    comm = {(b.upper(), t): results[(b, t)].get("communication_s", 0) for b in benchmarks for t in transports}
    drew = chart(out / "mops_per_process.png", f"Mop/s per process, class {args.problem_class}, p={args.procs}",
                 "Mop/s per process", names, transports, mops)
    chart(out / "communication_time.png", f"Communication time, class {args.problem_class}, p={args.procs}",
          "seconds inside BSPlib", names, transports, comm)
    print(f"\nresults: {out}/nas.csv, {out}/nas.json" + (f", {out}/*.png" if drew else " (no gnuplot: no charts)"))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
