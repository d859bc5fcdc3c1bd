#!/usr/bin/env python3
"""tests/soak/soak.py: the long tier's soak. For --minutes it runs random BSPlib jobs one
after another (transport, p = 1..16, seeded faults, a process killed with SIGKILL, a job
that aborts, a stranger process sending forged datagrams and connections to the job's
ports) and checks each: a job ends correctly (exit 0, its case's "passed" line) or stops
with the right message (the killed pid, the abort's text), within a bound; afterwards no
process of the job is left, no memfd of it is held, nothing new is in /dev/shm, the soak's
own descriptors are as before, bsprun's descriptors stay within a few per process, and
bsprun's peak memory stays flat across the run.
Prints the figures (jobs, faults, kills, leaks) and exits non-zero on any failure.

Usage: soak.py --bsprun PATH --cases PATH [--minutes N] [--seed S]
"""

import argparse
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time

CLEAN_CASES = ["put_all_to_all", "get_before_put", "overlapping_puts", "put_copies_source", "hp_variants",
               "bsmp_all_to_all", "empty_supersteps", "many_small_puts", "many_to_one", "all_to_all_bulk",
               "combined_puts", "zero_length", "enquiry"]
LOSSY = ("udp", "nic", "shm+udp", "shm+nic")  # where --fault applies (the reliable layer's transports)
JOB_BOUND = 120.0  # seconds any one job may take before it counts as hung (a generous bound)


def transports(bsprun):
    out = subprocess.run([bsprun, "--help"], capture_output=True, text=True).stderr
    built = re.search(r"transports built in: (.*)", out)
    names = [name.strip() for name in built.group(1).split(",")] if built else ["shm", "tcp", "udp"]
    if os.geteuid() != 0:  # nic and xdp need CAP_NET_RAW
        names = [name for name in names if "nic" not in name and "xdp" not in name]
    return names


def runs_several_here(bsprun, cases, transport):
    """'' when `transport` runs a 2-process job on this host, else the first line of why not:
    xdp attaches one program per interface, and where libxdp cannot chain programs (no
    freplace, no bpffs) only one xdp process per host runs; the soak leaves such a transport out."""
    try:
        job = subprocess.run([bsprun, "-n", "2", f"--transport={transport}", cases, "--case=put_all_to_all"],
                             capture_output=True, text=True, timeout=JOB_BOUND)
    except subprocess.TimeoutExpired:
        return "a 2-process job did not end"
    if job.returncode == 0:
        return ""
    return (job.stderr.strip().splitlines() or [f"exit {job.returncode}"])[0][:300]


def environ_of(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return dict(item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item)
    except OSError:
        return {}


def tagged_processes(tag):
    """OS pid -> BSP_PID (or -1) of every process whose environment carries the job's tag."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        env = environ_of(entry)
        if env.get(b"SOAK_TAG") == tag.encode():
            found[int(entry)] = int(env.get(b"BSP_PID", b"-1"))
    return found


def job_memfds(tag):
    """memfds of the shm transport held by processes of the tagged job."""
    held = []
    for pid in tagged_processes(tag):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if "bsplib-shm" in link:
                    held.append(f"{pid}:{link}")
        except OSError:
            pass
    return held


def socket_ports(pids):
    """(udp ports, tcp listening ports) of these processes, from /proc/net."""
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
        except OSError:
            pass
    udp, tcp = set(), set()
    for table, ports, listening_only in (("udp", udp, False), ("tcp", tcp, True)):
        try:
            with open(f"/proc/net/{table}") as f:
                for line in f.readlines()[1:]:
                    fields = line.split()
                    if fields[9] in inodes and (not listening_only or fields[3] == "0A"):
                        ports.add(int(fields[1].split(":")[1], 16))
        except OSError:
            pass
    return udp, tcp


def stranger(tag, rng, stop, sent):
    """A process outside the job: forged datagrams to its udp ports, connections with junk to
    its tcp ports and its coordinator; loopback only, bounded in count."""
    deadline = time.monotonic() + 10
    while not stop.is_set() and time.monotonic() < deadline:
        procs = tagged_processes(tag)
        members = [pid for pid, bsp_pid in procs.items() if bsp_pid >= 0]
        if members:
            break
        time.sleep(0.01)
    else:
        return
    control = environ_of(members[0]).get(b"BSP_CONTROL", b"").decode()
    # The data sockets come with bsp_begin, after exec: wait for them a little (shm has none).
    udp, tcp = set(), set()
    for _ in range(100):
        udp, tcp = socket_ports(members)
        if udp or tcp or stop.is_set():
            break
        time.sleep(0.01)
    if control.rsplit(":", 1)[-1].isdigit():
        tcp.add(int(control.rsplit(":", 1)[1]))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(200):
        if stop.is_set():
            break
        for port in udp:
            try:
                sock.sendto(rng.randbytes(rng.randint(1, 1400)), ("127.0.0.1", port))
                sent[0] += 1
            except OSError:
                pass
    sock.close()
    for port in tcp:
        if stop.is_set():
            break
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
                conn.sendall(rng.randbytes(rng.randint(1, 300)))
                sent[0] += 1
        except OSError:
            pass


def peak_rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def descriptor_count(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def run_job(args, rng, names, number):
    transport = rng.choice(names)
    p = rng.randint(1, 16)
    kind = rng.choices(["clean", "fault", "kill", "abort", "forged"], [4, 2, 2, 1, 2])[0]
    if kind == "fault" and transport not in LOSSY:
        transport = rng.choice([name for name in names if name in LOSSY] or names)
    if kind == "fault" and transport not in LOSSY:
        kind = "clean"
    # A forged job runs long enough to be found and attacked: its last process computes
    # for 3 s in the second superstep (slow_process), and the case still checks its end.
    case = {"kill": "sync_until_stopped", "abort": "abort_with_message", "forged": "slow_process"}.get(
        kind, rng.choice(CLEAN_CASES))
    argv = [args.bsprun, "-n", str(p), f"--transport={transport}"]
    if kind == "fault":
        argv.append(f"--fault=drop={rng.choice(['0.01', '0.05', '0.1'])},dup=0.01,reorder=0.02,seed={rng.randint(1, 9999)}")
    argv += [args.cases, f"--case={case}"]
    tag = f"{os.getpid()}-{number}"
    env = dict(os.environ, SOAK_TAG=tag)
    started = time.monotonic()
    job = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=env, start_new_session=True)
    out, err = [], []
    readers = [threading.Thread(target=lambda s=s, b=b: b.append(s.read())) for s, b in ((job.stdout, out), (job.stderr, err))]
    for reader in readers:
        reader.start()
    stop = threading.Event()
    sent = [0]
    attacker = None
    if kind == "forged":
        attacker = threading.Thread(target=stranger, args=(tag, random.Random(rng.random()), stop, sent))
        attacker.start()
    victim = None
    peak = 0
    most_fds = 0  # bsprun's descriptors, sampled while the job runs
    kill_at = started + rng.uniform(0.05, 1.0)
    while job.poll() is None:
        now = time.monotonic()
        peak = max(peak, peak_rss_kib(job.pid))
        most_fds = max(most_fds, descriptor_count(job.pid))
        if kind == "kill" and victim is None and now >= kill_at:
            procs = tagged_processes(tag)
            members = {bsp_pid: pid for pid, bsp_pid in procs.items() if bsp_pid >= 0}
            if len(members) == p:  # every process exec'd: kill one of them
                victim = rng.randrange(p)
                os.kill(members[victim], signal.SIGKILL)
        if now - started > JOB_BOUND:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
            break
        time.sleep(0.02)
    seconds = time.monotonic() - started
    stop.set()
    if attacker:
        attacker.join()
    for reader in readers:
        reader.join()
    out_text = b"".join(out).decode(errors="replace")
    err_text = b"".join(err).decode(errors="replace")
    problems = []
    if seconds > JOB_BOUND:
        problems.append(f"hung: no end within {JOB_BOUND:.0f} s")
    elif kind in ("clean", "fault", "forged"):
        if job.returncode != 0 or f"case {case} passed" not in out_text:
            problems.append(f"expected success, got exit {job.returncode}")
    elif kind == "kill":
        if job.returncode == 0:
            problems.append("a killed job exited 0")
        elif victim is not None and not re.search(rf"\bpid {victim}\b", err_text):
            problems.append(f"the message does not name the killed pid {victim}")
    elif kind == "abort":
        if job.returncode == 0 or "custom abort message 42" not in err_text:
            problems.append(f"abort: exit {job.returncode}, message missing")
    # Leaks: processes of the job (given a moment to be reaped), memfds they hold.
    leftover = {}
    for _ in range(250):
        leftover = tagged_processes(tag)
        if not leftover:
            break
        time.sleep(0.02)
    if leftover:
        problems.append(f"leaked processes {sorted(leftover)}")
        for pid in leftover:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    # bsprun holds a few descriptors per process (start pipe, control session, output)
    # and a fixed few of its own: more means something leaks within the job.
    if most_fds > 4 * p + 32:
        problems.append(f"bsprun held {most_fds} descriptors for {p} processes")
    memfds = job_memfds(tag)
    if memfds:
        problems.append(f"leaked memfds {memfds[:3]}")
    return {"transport": transport, "p": p, "kind": kind, "case": case, "exit": job.returncode,
            "seconds": seconds, "peak_kib": peak, "fds": most_fds, "victim": victim, "forged": sent[0], "problems": problems,
            "leaks": (1 if leftover else 0) + (1 if memfds else 0), "err": err_text[-600:], "argv": argv}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bsprun", required=True)
    parser.add_argument("--cases", required=True)
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    names = transports(args.bsprun)
    for name in [name for name in names if "xdp" in name]:
        why = runs_several_here(args.bsprun, args.cases, name)
        if why:
            print(f"soak: leaving out {name}: {why}", flush=True)
            names.remove(name)
    print(f"soak: {args.minutes:g} min, seed {args.seed}, transports {', '.join(names)}", flush=True)
    shm_before = set(os.listdir("/dev/shm"))
    fds_before = len(os.listdir("/proc/self/fd"))
    end = time.monotonic() + args.minutes * 60
    results = []
    failures = 0
    while time.monotonic() < end:
        result = run_job(args, rng, names, len(results))
        results.append(result)
        if result["problems"]:
            failures += 1
            print(f"soak: job {len(results)} FAILED ({'; '.join(result['problems'])}): {' '.join(result['argv'])}\n"
                  f"  stderr: {result['err']}", flush=True)
        if len(results) % 50 == 0:
            print(f"soak: {len(results)} jobs, {failures} failed", flush=True)
    for r in sorted(results, key=lambda r: -r["seconds"])[:3]:
        print(f"soak: slow job {r['seconds']:.2f} s ({r['kind']}, exit {r['exit']}): {' '.join(r['argv'][1:])}\n"
              f"  stderr: {r['err'][-300:]}")
    fds_after = len(os.listdir("/proc/self/fd"))
    # New /dev/shm entries are leaks only if nothing else on the machine made them: BSPlib's
    # transports use memfds, so any name mentioning bsp counts.
    shm_new = [name for name in set(os.listdir("/dev/shm")) - shm_before if "bsp" in name.lower()]
    peaks = [r["peak_kib"] for r in results if r["peak_kib"] > 0]
    quarter = max(1, len(peaks) // 4)
    first = sorted(peaks[:quarter])[quarter // 2] if peaks else 0
    last = sorted(peaks[-quarter:])[quarter // 2] if peaks else 0
    memory_flat = last <= first * 1.25 + 1024
    count = lambda kind: sum(1 for r in results if r["kind"] == kind)
    leaks = sum(r["leaks"] for r in results) + len(shm_new) + (1 if fds_after != fds_before else 0)
    by_transport = {}
    for r in results:
        by_transport[r["transport"]] = by_transport.get(r["transport"], 0) + 1
    print(f"soak: jobs={len(results)} clean={count('clean')} faults={count('fault')} kills={count('kill')} "
          f"aborts={count('abort')} forged={count('forged')} (forged packets/connections "
          f"{sum(r['forged'] for r in results)}) failed={failures} leaks={leaks}")
    print(f"soak: per transport {by_transport}; p from {min(r['p'] for r in results)} to "
          f"{max(r['p'] for r in results)}; longest job {max(r['seconds'] for r in results):.2f} s")
    print(f"soak: bsprun peak RSS median first quarter {first} KiB, last quarter {last} KiB "
          f"({'flat' if memory_flat else 'GROWING'}); soak descriptors {fds_before} -> {fds_after}; "
          f"new /dev/shm entries {shm_new}")
    most = max(results, key=lambda r: r["fds"])
    print(f"soak: bsprun descriptors at most {most['fds']} (a job of {most['p']} processes; the bound is 4 per "
          f"process + 32)")
    ok = failures == 0 and leaks == 0 and memory_flat
    print(f"{len(results) - failures} passed, {failures} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
