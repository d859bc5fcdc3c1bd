#!/usr/bin/env python3
"""experiments/sync_model.py: a model of a superstep's cost against p.

Two commands:
  calibrate  measures the model's parameters on this machine, per network and transport:
             OUT/calibration.csv (p = 2: bench/layer_pingpong, experiments/sync_scaling on two
             cores and pinned to one), OUT/calibration_runs.csv (both protocols at p = 4, 8
             and 16, with their CPU, frames and context switches per process and superstep
             and the pages each process touches: the calibration subset f, beta, c and X come
             from) and OUT/wake_cost.csv (experiments/wake_cost: bare processes doing the sparse
             barrier's rounds and the dense all-to-all, spinning and blocking, with working
             sets of 0, 128 and 512 KiB, k = 2 .. 256; the all-to-all over TCP too);
  report     predicts, for p = 2 .. 10^4, the time of an empty bsp_sync and of a superstep
             in which every process puts one word to pid + 1, for the dense and the sparse
             protocol, compares it with OUT/sync_scaling.csv (experiments/sync_scaling.sh), and
             writes OUT/model.csv (curves), OUT/comparison.csv, OUT/sync_scaling.md (the
             table) and the plots OUT/sync_scaling_NETWORK_TRANSPORT.png/.svg (gnuplot).

The model (experiments/README.md summarises it) has two parts.

Machine-independent (LogP), per process and superstep, r = ceil(log2 p):
    frames D sent (and as many received), rounds R on the critical path, waits W (times a
    process must wait for a message it cannot have yet):
    dense     D = p - 1 (an `end` to every other process), R = 1, W = 1; the neighbour's
              word rides in the `end` record: the same frames
    sparse    empty:      D = r barrier messages, R = r, W = r (one per round)
              neighbour:  as empty: the word goes to pid + 1, the barrier's round-0 partner,
              whose records need no ack (the barrier message behind them on the same
              in-order link stands for it) and share a frame with that message
              (bsplib/engine_sparse.cc); D = r, R = r, W = r
    udp and nic add the reliable layer's explicit acks A = A_w + A_p, from its constants
    (recovery/protocol_constants.h, recovery/buffer_pool.cc, recovery/buffer_ack_policy.cc),
    not fitted:
      the window rule, A_w: the pool n (pool_frames for the frame size the transport picks at
              p: reliable_pool) gives a link window w = n / 2 / (p - 1) (at least 2); a frame
              asks for an ack once more than w/2 of the link's frames are unacknowledged, the
              receiver answers once it holds theta = n / (2 p) frames since its last ack, the
              sender stops at w. Sparse: each barrier link with no traffic back in the
              superstep (one_way_rounds: no round m with 2^k + 2^m = 0 mod p) costs one ack per
              min(w, max(w//2 + 1, theta)) frames (lo udp p = 64: 5 of 6 rounds, w = theta = 8:
              0.625 per superstep, measured 0.628; w = 2 at p >= 128: every second frame).
              Dense: an `end` each way per link and superstep; a pair's first sender still has
              its previous `end` unacknowledged when it was the second the superstep before
              (probability 1/2 each), so a quarter of the `end`s leave with two
              unacknowledged, which asks only where w < 4 (lo udp p >= 128, nic p >= 64);
      probes, A_p (dense): a process waiting for `end`s probes a link quiet for one retry
              interval I (kMaxRetry = 10 ms, the ceiling: a loaded superstep's round trips
              exceed it) and its peer answers with an ack in the run in which it sends its
              `end`: at most one per link and superstep, with probability P(t_j - t_i > I) =
              (1 - I/T)^2 / 2 for sync times t_i, t_j spread evenly over the superstep T.
              Each answer costs its probe as well (a frame, sent and received, that --stats
              does not count): the CPU has D + A_w + 2 A_p frames, the frame count D + A.
              Sparse waits (one partner per round, about T / r) leave no probes: none.
  With a core per process (what a cluster of p such hosts pays; the dashed curves):
    T1(p) = E + R h + max(0, D + A - R) f   (A with the probes' frames)
    h one hop (o_send + L + o_receive: half the channel's busy-polling round trip), f a
    frame's CPU time, sent and received (on lo and the namespace cluster the wire is kernel
    work on the same cores), E the engine's own work per superstep: the p = 2 calibration's
    mean empty superstep minus half the median round trip (means, as the model predicts and
    is compared with means; until 2026-11-27 minima, the undisturbed cost, which left every
    p = 2 point 15-35% low).

Shared cores (C cores, p > C; what lo and the 8-namespace cluster on this 2-core machine
measure): some process is always runnable, so the cores are never idle and the superstep
lasts the CPU time of all processes divided by C; a process waiting for a message gives its
core to another (a context switch: sched_yield while it spins, p <= 4 C, a sleep in poll
beyond, as recovery/spin_policy.cc decides):
    T = max(T1(p), (p / C) U),
    U = E + (D + A) (f + beta k + phi(p)) + S (c_mode + g(p) + refill(p, X0) + walk(p, N)) + refill(p, x1 p)
      S      context switches per process and superstep: those of bare processes doing the
             same pattern in the same wait mode (experiments/wake_cost, voluntary + involuntary):
             sparse W x (switches per wait of the rounds at k = p), dense the switches per
             round of the all-to-all at k = p (its p - 1 messages) scaled to the p - 1 + A
             messages a process receives (the reliable layer's acks arrive among the `end`s
             as more of its messages; since 2026-11-27), times rho, bsplib's
             measured switches over the bare processes' at the calibration p of the same
             protocol and mode; most waits of a blocked barrier find their message already
             there (g and the refills are measured per wait of the rounds and divided by its
             switches per wait). On the namespace cluster the bare processes' switches are
             those of wake_cost --netns (since 2026-11-27, second revision): their sockets on
             the 8 hosts, each host's processes in a session of their own, as the hosts' sshd
             starts bsprun's, so in a scheduler autogroup per host (kernel.sched_autogroup_
             enabled; bsprun on lo forks all into one): there the all-to-all's switches per
             message rise from 0.50 at k = 16 to 0.84 at 32 and 0.73 at 64 (lo: 0.09-0.11), as
             bsplib's dense ones per frame do (0.37-0.53, 0.72-0.85, 0.85-1.14); rho is taken at
             16 against them. The rounds' switches per wait there: 0.77, 0.85, 0.91 (lo 0.56-0.57)
      c_mode the library's own CPU per switch (its pass after a wake-up: timers, the
             transport's poll, the active links), spinning and blocking apart; fitted
      g(p)   the scheduler's growth: wake_cost's CPU per wait at k = p over that at the
             smallest calibration p in the same mode (4 spinning, 16 blocking), per switch
      refill(p, X)  the working set: wake_cost with X KiB touched per round at k = p, minus
             the same at k = 2 (where it stays in the caches): what fetching it back
             costs once the p processes' sets outgrow the L2s and the L3 (wake_cost's CPU per
             KiB: the least-squares slope over 0, 128, 512 KiB, a running maximum over k).
             X0 KiB at every switch, x1 p (per-peer state) once per superstep, X0 + x1 p the
             anonymous pages (heap, stacks, buffers) each process of the calibration runs at
             p = 4, 8, 16 touched while the job ran two supersteps' CPU (stopped, clear_refs,
             continued until schedstat says so, stopped, smaps' Referenced): page-granular, an
             upper bound on the bytes; wake_cost's touch is sequential, so dearer per page than
             a scattered one (--scatter-pages, a line in each of 128 pages in a random order: 29
             ns a page at k = 256 beyond k = 2, against 76 for a page touched whole)
      walk(p, N)  the library's walks over per-peer arrays in its first pass after a wake-up
             (walked_entries: N = the entries read, from the code: in the dense protocol
             Engine::pump's send_pending over all p Outgoing and collect_awaited over incoming_,
             on udp and nic the reliable layer's passes over its active links, then all p - 1;
             none in the sparse one, whose passes visit only the streams written and the
             peers with work): wake_cost --walk-entries,
             a walk over N entries WALK_STRIDE bytes apart right after each wait, timed by
             itself, at k = p minus at k = 2 (where the array stays in the caches), per switch
             (divided by the rounds' switches per wait). A 1024-entry walk takes 0.8 us at
             k = 2, 1.1 at 16, 3.4 at 64, 4.5 at 128 and 6.8 at 256: the term matters from
             p = 128 (N there: 250-1020 entries dense)
      beta k nic only: each packet socket a frame is offered to runs its filter (BPF on the
             destination pid), so a frame costs beta for each of the k more sockets than at
             p = 2: on lo those bound to its destination's EtherType (one per pid mod 256, so
             k = ceil(p / 256) - 1, and other jobs' sockets that see it); on the cluster,
             bound to every protocol, the destination host's ceil(p / 8) - 2; none with a host
             per process (the dashed curves). On the cluster (and on lo when other jobs'
             sockets saw the calibration's frames) nic's f is h (the p = 2 hop) and beta is
             fitted; on lo, where no other socket sees a frame, f is fitted as udp's and tcp's.
      phi(p) dense tcp only: each process holds p - 1 connections, and kernel TCP's cost per
             message grows with them beyond what UDP's does (the sockets' state, the epoll set
             over them): experiments/wake_cost's all-to-all over TCP (a connection per pair, an epoll
             set) minus its all-to-all over UDP, CPU per message at k = p in bsplib's wait mode,
             beyond that gap at the calibration p of the mode (4 spinning, 16 blocking, where f
             was fitted; the calibration runs are fitted net of it); a running maximum over k.
             The sparse protocol's ~2 log2 p connections leave it out
    f (for nic on the cluster beta, with f = h) and c_spin, c_block are fitted (least squares; f from the
    dense runs, c from the sparse ones, alternately) on the calibration subset only: both
    protocols at p = 4, 8 (spinning) and 16 (blocking) with their measured switches
    (calibration_runs.csv, runs of their own), never on the points compared. A network
    without such runs (an older calibration) takes the transport's c from one with: it is
    the library's own work. The per-peer walk of the first model (q (p - 2) per wait, fitted)
    is gone: walk(p, N) counts the entries from the code and prices them by wake_cost, and the
    reliable layer visits only active links (recovery/protocol_core.cc), all of them in a
    dense superstep.
    Every term is CPU time, so U is compared with the CPU each process used per superstep
    (sync_scaling.csv's cpu_us_per_proc, getrusage) as well as T with the time, and S with
    the switches measured: on a machine others load, the job gets a share of the cores and T
    grows by 1 / share, while U does not.
"""
import argparse
import csv
import math
import os
import signal
import statistics
import subprocess
import sys
import time

CORES = 2  # the machine the sweeps in experiments/README.md were measured on
RELIABLE_LAYER = {"udp", "nic"}

# Every number the model takes from the C++ code, in one place: (value, file, constant).
# experiments/sync_model_test.py's CppConstantsTest reads each file and fails when a value
# here no longer matches it: change the C++ and this table together.
FROM_CPP = {
    "MAX_RETRY_NS": (10000000, "recovery/protocol_constants.h", "kMaxRetry"),  # 10ms
    "DEFAULT_POOL_BYTES": (8 << 20, "recovery/protocol_constants.h", "kDefaultPoolBytes"),
    "DEFAULT_BUFFERS": (1024, "recovery/protocol_constants.h", "kDefaultBuffers"),
    "LARGEST_DEFAULT_POOL": (4096, "recovery/protocol_constants.h", "kLargestDefaultPool"),
    "HOST_POOL_BYTES": (512 << 20, "recovery/protocol_constants.h", "kHostPoolBytes"),
    "MIN_BUFFERS": (8, "recovery/protocol_constants.h", "kMinBuffers"),
    "LINK_WINDOW_DIVISOR": (2, "transport/transport.h", "kLinkWindowDivisor"),
    "MIN_LINK_WINDOW": (2, "recovery/protocol_constants.h", "kMinLinkWindow"),
    "SPIN_PER_CORE": (4, "recovery/spin_policy.h", "kFullSpinProcessesPerCore"),
    "LOOPBACK_ETHER_TYPE_BASE": (0xB500, "transport/nic/ether_types.h", "kLoopbackEtherTypeBase"),
    "LOOPBACK_ETHER_TYPES": (256, "transport/nic/ether_types.h", "kLoopbackEtherTypes"),
    "UDP_ETHERNET_MTU": (1472, "transport/udp/udp_transport.cc", "kDefaultMtu"),
    "UDP_LOOPBACK_MTU": (8192, "transport/udp/udp_transport.cc", "kLoopbackMtu"),
    "UDP_LOOPBACK_BULK_MTU": (65507, "transport/udp/udp_transport.cc", "kLoopbackBulkMtu"),
    "UDP_BULK_POOL_BYTES": (24 << 20, "transport/udp/udp_transport.cc", "kBulkPoolBytes"),
    "UDP_BULK_POOL_PROCESSES": (16, "transport/udp/udp_transport.cc", "kBulkPoolProcesses"),
    "NIC_ETHERNET_MTU": (1500, "transport/nic/nic_transport.cc", "kDefaultMtu"),
    "NIC_LOOPBACK_MTU": (65535, "transport/nic/nic_transport.cc", "kLoopbackMtu"),
    "NIC_DEFAULT_RX_RING_BYTES": (32 << 20, "transport/nic/nic_transport.cc", "kDefaultRxRingBytes"),
    "NIC_HOST_RX_RING_BYTES": (512 << 20, "transport/nic/nic_transport.cc", "kHostRxRingBytes"),
    "NIC_LEAST_RX_RING_BYTES": (2 << 20, "transport/nic/nic_transport.cc", "kLeastRxRingBytes"),
    "NIC_LEAST_LOOPBACK_RING_FRAMES": (120, "transport/nic/nic_transport.cc", "kLeastLoopbackRingFrames"),
    "NIC_LOOPBACK_RING_FRAMES_PER_PEER": (2, "transport/nic/nic_transport.cc", "kLoopbackRingFramesPerPeer"),
    "NIC_LEAST_LOOPBACK_MTU": (2048, "transport/nic/nic_transport.cc", "kLeastLoopbackMtu"),
    "NIC_POOL_BYTES_FOR_LARGE_FRAMES": (16 << 20, "transport/nic/nic_transport.cc", "kPoolBytesForLargeFrames"),
    "NIC_POOL_FRAMES_PER_PEER": (4, "transport/nic/nic_transport.cc", "kPoolFramesPerPeer"),
    "ETHERNET_HEADER": (14, "transport/nic/packet_socket.h", "kEthernetHeader"),
}
globals().update({name: value for name, (value, _, _) in FROM_CPP.items()})
MAX_RETRY_US = MAX_RETRY_NS / 1000.0  # the retry interval's ceiling before backoff
NIC_SLOT_OVERHEAD = 128  # transport/nic/nic_transport.cc: a ring slot's bytes beyond the frame (literal there)
KINDS = ("empty", "neighbour")
SYNCS = ("dense", "sparse")
CLUSTER_HOSTS = 8  # experiments/sync_scaling.sh --cluster
WAKE_PROCS = (2, 4, 8, 16, 32, 64, 128, 256)  # experiments/wake_cost's k
TOUCH_KIB = (0, 128, 512)  # working sets per process wake_cost is run with
CALIBRATION_PS = (4, 8, 16)  # f and q are fitted on these runs only (2, 4, 8 processes per core)
WALK_ENTRIES = (256, 1024)  # experiments/wake_cost --walk-entries: walks timed by themselves, interpolated between
WALK_STRIDE = 128  # bytes between the entries walked (a per-peer structure: Engine::Outgoing is 112)


def log2ceil(p):
    return max(1, math.ceil(math.log2(p))) if p > 1 else 0


def protocol(sync, kind, p):
    """Frames D sent per process, rounds R on the critical path, waits W per superstep."""
    if sync == "dense":
        return p - 1, 1, 1
    r = log2ceil(p)
    return r, r, r  # empty, and neighbour: the word rides with round 0's barrier message


class WakeCost:
    """experiments/wake_cost's CPU and context switches per message against k processes on the
    cores, per pattern (rounds: the sparse barrier; alltoall: the dense sync), wait mode (spin,
    block) and working set touched per round (touch_kib). Medians over repeats; between the k
    measured linear in log2 k, beyond the largest extrapolated linearly in log2 k (growing
    only; only the 2-core curves beyond p = 256 use that)."""

    def __init__(self, rows, cores=CORES, hosts=0):
        raw, tcp = {}, {}
        for row in rows:
            if int(row.get("cpus") or cores) != cores or row.get("pattern") not in ("rounds", "alltoall"):
                continue
            if int(row.get("hosts") or 0) != hosts or int(row.get("scatter_pages") or 0):
                continue  # another network's (hosts: the namespace cluster's), or scattered pages (unused)
            if row.get("transport") == "tcp":  # kernel TCP's all-to-all: tcp_growth's, kept apart
                if row["pattern"] == "alltoall" and not int(float(row.get("touch_kib") or 0)):
                    tcp.setdefault(row["wait"], {}).setdefault(int(row["k"]), []).append(
                        float(row["rusage_cpu_us_per_message"]))
                continue
            walk = int(row.get("walk_entries") or 0) if row.get("walk_us_per_round") else 0
            key = ((row["pattern"], row["wait"], "walk", walk) if walk
                   else (row["pattern"], row["wait"], int(float(row.get("touch_kib") or 0))))
            switches = (float(row.get("voluntary_cs_per_message") or 0)
                        + float(row.get("involuntary_cs_per_message") or 0))
            # A walk's series keeps the walk's own time per round (walk_us_per_round) as its CPU.
            cpu = float(row["walk_us_per_round"] if walk else row["rusage_cpu_us_per_message"])
            raw.setdefault(key, {}).setdefault(int(row["k"]), []).append((cpu, switches))
        self.cores = cores
        self.series = {key: [(math.log2(k), statistics.median(v[0] for v in values),
                              statistics.median(v[1] for v in values)) for k, values in sorted(by_k.items())]
                       for key, by_k in raw.items()}
        self.points = bool(self.series)
        self.tcp_alltoall = {wait: [(math.log2(k), statistics.median(values), 0.0) for k, values in sorted(by_k.items())]
                             for wait, by_k in tcp.items()}
        # The same patterns run on the namespace cluster (wake_cost --netns: sockets on its hosts,
        # a session per host): the switch counts there (the CPU terms stay this machine's).
        self.cluster = WakeCost(rows, cores, CLUSTER_HOSTS) if hosts == 0 else None

    def switches_on(self, network, pattern, k):
        """switches(), from the runs on the namespace cluster where network is the cluster and
        they measured the pattern in the wait mode of k; else from those on lo."""
        if network == "cluster" and self.cluster is not None and self.cluster._series(pattern, self.mode(k)):
            return self.cluster.switches(pattern, k)
        return self.switches(pattern, k)

    def mode(self, k):
        """bsplib's wait with k processes on the cores (recovery/spin_policy): spin up to
        SPIN_PER_CORE per core, block beyond."""
        return "spin" if k <= SPIN_PER_CORE * self.cores else "block"

    def _series(self, pattern, wait, touch=0):
        found = self.series.get((pattern, wait, touch))
        if found is None and touch == 0 and self.cluster is not None:  # an older wake_cost.csv: one wait mode only
            found = self.series.get((pattern, "spin" if wait == "block" else "block", 0))
        return found

    @staticmethod
    def _at(points, x, column):
        if x <= points[0][0] or len(points) == 1:
            return points[0][column]
        for a, b in zip(points, points[1:]):
            if x <= b[0]:
                return a[column] + (b[column] - a[column]) * (x - a[0]) / (b[0] - a[0])
        a, b = points[-2], points[-1]
        return b[column] + max(0.0, (b[column] - a[column]) / (b[0] - a[0])) * (x - b[0])

    def switches(self, pattern, k):
        """Context switches (voluntary and involuntary) per wait of the rounds, or per round of
        the all-to-all (its k - 1 messages: a dense superstep), in the wait mode bsplib uses at
        k; None without measurements."""
        found = self._series(pattern, self.mode(k))
        if not found:
            return None
        return max(0.0, self._at(found, math.log2(k), 2)) * (k - 1 if pattern == "alltoall" else 1)

    def cpu(self, k, mode=None):
        """CPU per round of the rounds pattern at k without a working set."""
        found = self._series("rounds", mode or self.mode(k))
        return self._at(found, math.log2(k), 1) if found else 0.0

    def per_kib(self, k, mode=None):
        """CPU per KiB touched per round at k: the least-squares slope over the working sets
        measured (0 without them), not smaller than at any smaller k measured (more processes
        evict more; a dip is the load of the moment)."""
        mode = mode or self.mode(k)
        series = [(key[2], self.series[key]) for key in sorted(k for k in self.series if len(k) == 3)
                  if key[0] == "rounds" and key[1] == mode]
        if len(series) < 2:
            return 0.0

        def slope(x):
            points = [(t, self._at(found, x, 1)) for t, found in series]
            mt = statistics.mean(t for t, _ in points)
            mv = statistics.mean(v for _, v in points)
            den = sum((t - mt) ** 2 for t, _ in points)
            return sum((t - mt) * (v - mv) for t, v in points) / den if den > 0 else 0.0

        xs = sorted({x for _, found in series for x, _, _ in found if x <= math.log2(k)}) + [math.log2(k)]
        return max(slope(x) for x in xs)

    def refill(self, k, touch):
        """Per wait: what a working set of touch KiB costs at k processes beyond what it costs
        where it stays in the caches (k = 2, the same wait mode): fetching it back after the
        other processes ran. 0 without wake_cost runs with working sets."""
        if touch <= 0 or k <= 2:
            return 0.0
        mode = self.mode(k)
        return max(0.0, touch * (self.per_kib(k, mode) - self.per_kib(2, mode)))

    def walk_time(self, k, entries, mode=None):
        """Time of a walk over `entries` per-peer entries (WALK_STRIDE bytes apart, one word read
        from each, right after a wait of the rounds) at k processes: wake_cost --walk-entries
        times the walk by itself; linear in the entries between the lengths measured,
        proportional beyond; not smaller than at any smaller k measured. 0 without them."""
        mode = mode or self.mode(k)
        series = sorted((key[3], found) for key, found in self.series.items()
                        if len(key) == 4 and key[0] == "rounds" and key[1] == mode and key[2] == "walk")
        if not series or entries <= 0:
            return 0.0

        def at(x):
            times = [(n, self._at(found, x, 1)) for n, found in series]
            if entries <= times[0][0]:
                return times[0][1] * entries / times[0][0]
            for (n1, t1), (n2, t2) in zip(times, times[1:]):
                if entries <= n2:
                    return t1 + (t2 - t1) * (entries - n1) / (n2 - n1)
            return times[-1][1] * entries / times[-1][0]

        xs = sorted({x for _, found in series for x, _, _ in found if x <= math.log2(k)}) + [math.log2(k)]
        return max(at(x) for x in xs)

    def walk_refill(self, k, entries):
        """Per wait: walking `entries` per-peer entries at k processes beyond what it costs where
        they stay in the caches (k = 2, the same wait mode): fetching them back after the others
        ran. 0 without wake_cost walk runs."""
        if entries <= 0 or k <= 2:
            return 0.0
        mode = self.mode(k)
        return max(0.0, self.walk_time(k, entries, mode) - self.walk_time(2, entries, mode))

    def _rise(self, points, value, k):
        """value(log2 k) over value at the smallest calibration p in k's wait mode (4 spinning,
        16 blocking), where the calibration runs measured the rest; a running maximum over the
        k of points in between, never below 0."""
        mode = self.mode(k)
        same = [p for p in CALIBRATION_PS if self.mode(p) == mode]
        reference = math.log2(min(same) if same else max(CALIBRATION_PS))
        xs = [x for x, _, _ in points if reference < x < math.log2(k)] + [math.log2(k)]
        return max(0.0, max(value(x) for x in xs) - value(reference))

    def growth(self, k):
        """Per wait: the scheduler's CPU at k processes over that at the smallest calibration p
        in the same wait mode (bare processes, no working set), where the calibration runs
        measured the rest of a switch's cost; a running maximum over k."""
        if not self.points or k <= self.cores:
            return 0.0
        found = self._series("rounds", self.mode(k))
        return self._rise(found, lambda x: self._at(found, x, 1), k) if found else 0.0

    def tcp_growth(self, k):
        """Per message of the all-to-all at k processes: what kernel TCP costs beyond UDP (each
        process holding k - 1 connections: their sockets' state, the epoll set over them),
        beyond that gap at the smallest calibration p of the same wait mode (where f was
        fitted); a running maximum over k, 0 without wake_cost --transport=tcp alltoall runs."""
        if k <= self.cores:
            return 0.0
        mode = self.mode(k)
        tcp, udp = self.tcp_alltoall.get(mode), self._series("alltoall", mode)
        if not tcp or not udp:
            return 0.0
        return self._rise(tcp, lambda x: self._at(tcp, x, 1) - self._at(udp, x, 1), k)


def connection_growth(params, sync, p):
    """CPU per frame that a dense tcp superstep adds beyond the calibration p: its processes
    hold p - 1 connections each (WakeCost.tcp_growth); the sparse protocol's ~2 log2 p do not
    grow it, and the other transports have none."""
    if params.get("transport") != "tcp" or sync != "dense":
        return 0.0
    return params["wake"].tcp_growth(p)


def fanout(network, p):
    """nic: packet sockets each frame is offered to beyond p = 2's. Every process has one on
    the interface, with a BPF filter on its destination pid, and the kernel runs the filter
    of each socket the frame is offered to: on lo only those bound to the destination's
    EtherType, ceil(p / 256) (one at p = 2; before 2026-11-27 all p sockets had one type),
    on the cluster (sockets bound to every protocol) the destination host's ceil(p / 8)."""
    if network == "lo":
        return max(0, math.ceil(p / LOOPBACK_ETHER_TYPES) - 1)
    return max(0, math.ceil(p / CLUSTER_HOSTS) - 2)


def walked_entries(transport, sync, p):
    """Per-peer entries a pass of the library reads after a wake-up, each in an array of one
    entry per peer. Since 2026-11-27 (third revision) the engine's passes visit only the
    streams written this superstep (bsplib/engine.cc: writing_, receiving_, moved_) and tcp's
    receive and flush only the peers with bytes queued or frames left (backlog_, buffered_),
    so a sparse superstep walks no per-peer array: its lists hold the barrier partners and
    the destinations. A dense one writes an `end` to every peer, so its send_pending visits
    all p Outgoing entries (112 bytes), its collect_awaited all p incoming_ (200 bytes), and
    on udp and nic every link of the reliable layer is active: its service, deadline and
    waiting passes walk the active links' SendLink and ReceiveLink (224 and 160 bytes;
    recovery/protocol_core.cc). Counted in entries of WALK_STRIDE bytes (one word read in
    each: what an entry spans of lines). Before the revision every pass also walked all p:
    send_pending and the watchdog's progress_ in both protocols, tcp's Peers (two entries
    each): sparse 1.2 entries per peer, tcp 3.2."""
    if sync != "dense":
        return 0.0
    per_peer = 2.0
    if transport in RELIABLE_LAYER:
        per_peer += 2.0
    return per_peer * max(0, p - 1)


def pool_frames(requested, mtu, p):
    """recovery/buffer_pool.cc pool_frames: the reliable layer's pool (frames) for an MTU and p."""
    if requested:
        return max(requested, MIN_BUFFERS)
    frames = min(max(DEFAULT_POOL_BYTES // mtu, DEFAULT_BUFFERS), LARGEST_DEFAULT_POOL)
    frames = min(frames, HOST_POOL_BYTES // max(p, 1) // mtu)
    return max(frames, LINK_WINDOW_DIVISOR * MIN_LINK_WINDOW * (p - 1), MIN_BUFFERS)


def reliable_pool(network, transport, p):
    """The pool (frames) a process of a p-process job gets by default, as the transports ask
    for it: udp on lo (transport/udp/udp_transport.cc) 65507-byte frames and a 24 MiB pool up to
    16 processes, 8 KiB frames beyond; on Ethernet (the cluster's veths) 1472; nic on lo
    (transport/nic/nic_transport.cc) frames sized so that its receive ring (512 MiB / p, 2..32
    MiB) holds 2 (p - 1) of them, at least 120, in 3/4 of it, 2048..65535 bytes, and above 16 KiB
    a 16 MiB pool of at least 4 (p - 1) frames; on the cluster the veth's 1500. A mirror of
    those files (their constants are in FROM_CPP, which the test checks against them)."""
    if transport == "udp":
        if network == "lo":
            if p <= UDP_BULK_POOL_PROCESSES:
                return pool_frames(UDP_BULK_POOL_BYTES // UDP_LOOPBACK_BULK_MTU, UDP_LOOPBACK_BULK_MTU, p)
            return pool_frames(0, UDP_LOOPBACK_MTU, p)
        return pool_frames(0, UDP_ETHERNET_MTU, p)
    if network == "lo":
        rx_bytes = min(max(NIC_HOST_RX_RING_BYTES // max(p, 1), NIC_LEAST_RX_RING_BYTES), NIC_DEFAULT_RX_RING_BYTES)
        ring = max(NIC_LEAST_LOOPBACK_RING_FRAMES, NIC_LOOPBACK_RING_FRAMES_PER_PEER * (p - 1))
        mtu = min(max(rx_bytes * 3 // 4 // ring - ETHERNET_HEADER - NIC_SLOT_OVERHEAD, NIC_LEAST_LOOPBACK_MTU),
                  NIC_LOOPBACK_MTU)
        if mtu > NIC_POOL_BYTES_FOR_LARGE_FRAMES // 1024:
            return pool_frames(max(NIC_POOL_BYTES_FOR_LARGE_FRAMES // mtu, NIC_POOL_FRAMES_PER_PEER * max(p - 1, 1)),
                               mtu, p)
        return pool_frames(0, mtu, p)
    return pool_frames(0, NIC_ETHERNET_MTU, p)


def link_window(pool, p):
    """recovery/protocol_core.cc: the most frames one link holds unacknowledged,
    pool / kLinkWindowDivisor / (p - 1), at least kMinLinkWindow."""
    return max(MIN_LINK_WINDOW, pool // LINK_WINDOW_DIVISOR // max(1, p - 1))


def one_way_rounds(p):
    """Rounds k of the dissemination barrier whose link i -> i + 2^k carries nothing back in
    the superstep (no round m with 2^k + 2^m = 0 mod p, whose message would piggy-back an ack)."""
    r = log2ceil(p)
    return sum(1 for k in range(r) if not any((2 ** k + 2 ** m) % p == 0 for m in range(r)))


def window_acks(network, transport, sync, p):
    """Explicit acks per process and superstep that the reliable layer's window rule asks
    for (recovery/buffer_ack_policy.cc; 0 on tcp). A sender flags a frame ack-requested once
    more than half its link's window w is unacknowledged, the receiver answers once it holds
    theta = pool / (2 p) frames (at least 1) since its last ack, and the sender stops at w:
    on a link whose frames nothing piggy-backs an ack on, one ack per min(w, max(w//2 + 1,
    theta)) frames.
      sparse: the barrier's one-way links (one_way_rounds), a frame each per superstep;
      dense:  every link carries an `end` each way per superstep. The pair's first sender
              in a superstep still has its previous frame unacknowledged when it was the
              second in the superstep before (the other's `end` then left before ours
              arrived): with the order independent, a quarter of the frames go out with 2
              unacknowledged, and ask only where 2 is more than half the window (w < 4)."""
    if transport not in RELIABLE_LAYER or p < 2:
        return 0.0
    pool = reliable_pool(network, transport, p)
    w = link_window(pool, p)
    theta = max(1, pool // (2 * p))
    if sync == "dense":
        return (p - 1) / 4.0 if w < 4 else 0.0
    return one_way_rounds(p) / float(min(w, max(w // 2 + 1, theta)))


def probe_acks(sync, p, T):
    """Explicit acks per process and superstep that answer a waiting receiver's probes
    (recovery/protocol_core.cc receiver_probe_due): a process waiting for a peer's `end`
    probes it once the link has been quiet one retry interval I (kMaxRetry = 10 ms, the
    ceiling: the round trips a loaded superstep measures exceed it), and the peer answers
    with an ack in the run in which it sends its `end` (dense: every `end` leaves at the start
    of its sender's sync), so at most one per link and superstep. With the p processes'
    syncs spread evenly over the superstep T on the shared cores (i starts waiting at t_i,
    j sends at t_j, both uniform on [0, T]), P(t_j - t_i > I) = (1 - I/T)^2 / 2. Dense only:
    a sparse wait is for one partner's message per round, T / r apart, mostly shorter
    than I. Each such ack costs its probe as well (another frame, sent and received)."""
    if sync != "dense" or T <= MAX_RETRY_US:
        return 0.0
    return (p - 1) * (1.0 - MAX_RETRY_US / T) ** 2 / 2.0


def working_set(params, sync):
    """(X0, x1): a process touches X0 KiB at every wake-up (its engine, transport, buffers) and
    x1 KiB per peer once per superstep, from the pages the calibration runs' processes
    touched at p = 4, 8, 16 (X0 + x1 p; 0 where not measured)."""
    return params.get("touched", {}).get(sync, (0.0, 0.0))


def bare_switches(wake, sync, W, p, network="lo", acks=0.0):
    """Context switches per superstep of bare processes doing the protocol's pattern in the
    wait mode bsplib uses at p (experiments/wake_cost): sparse W waits of the rounds, dense one round
    of the all-to-all, its switches per message for each of the p - 1 `end`s and the `acks`
    a process receives (the reliable layer's acks arrive among the `end`s, as more of the
    all-to-all's messages); on the cluster those of the runs on its namespaces where there
    are any (its hosts' processes in a session each, as sshd starts them: a scheduler
    autogroup per host); without measurements one per wait."""
    if sync == "dense":
        found = wake.switches_on(network, "alltoall", p)
        return W if found is None else found * (p - 1 + acks) / (p - 1)
    found = wake.switches_on(network, "rounds", p)
    return W * (1.0 if found is None else found)


def switches(params, sync, W, p, cores, acks=0.0):
    """Context switches per process and superstep: none with a core each; with shared cores
    bare_switches (with the acks a process receives) times rho, the ratio of bsplib's
    measured switches to the bare processes' at the calibration p of the same protocol and
    wait mode."""
    if p <= cores:
        return 0.0
    wake = params["wake"]
    return (bare_switches(wake, sync, W, p, params.get("network", "lo"), acks)
            * params.get("rho", {}).get((sync, wake.mode(p)), 1.0))


def switch_extra(params, sync, p, S):
    """CPU per superstep that experiments/wake_cost adds to S switches beyond the calibration runs:
    per switch the scheduler's growth with p and the refill of X0, once per superstep the
    refill of the x1 p of per-peer state (wake_cost measures both per wait of the rounds,
    divided here by the rounds' switches per wait)."""
    if S <= 0:
        return 0.0
    wake = params["wake"]
    per_wait = max(wake.switches("rounds", p) or 1.0, 0.05)
    x0, x1 = working_set(params, sync)
    return S * per_switch_extra(params, sync, p) + wake.refill(p, x1 * p) / per_wait


def per_switch_extra(params, sync, p):
    """switch_extra's part per switch: the scheduler's growth, the refill of X0 and the walks
    over the per-peer arrays (walked_entries) that the library's first pass after a wake-up
    reads back from memory."""
    wake = params["wake"]
    per_wait = max(wake.switches("rounds", p) or 1.0, 0.05)
    walk = wake.walk_refill(p, walked_entries(params.get("transport", ""), sync, p))
    return (wake.growth(p) + wake.refill(p, working_set(params, sync)[0]) + walk) / per_wait


def predict(params, transport, sync, kind, p, cores=CORES, measured_us=None):
    """Predicted mean time per superstep (us), frames sent per process, the CPU time per
    process and superstep (us) of the shared-core term and its context switches. With
    measured_us, the reliable layer's acks are those of a superstep that long (the CPU check
    on a loaded machine, where the time, and with it the acks, grew by the load)."""
    h, f, E = params["h"], params["f"], params["E"]
    D, R, W = protocol(sync, kind, p)
    # A frame on a shared machine: its CPU plus, for nic, the other sockets' filters, for
    # dense tcp what its p - 1 connections add.
    f_shared = f + params["beta"] * fanout(params["network"], p) + connection_growth(params, sync, p)

    def time_with(A):
        # The acks arrive as more messages: in a dense superstep they switch as the `end`s do.
        S = switches(params, sync, W, p, cores, A)
        waiting = S * params["c_" + params["wake"].mode(p)] + switch_extra(params, sync, p, S)
        T1 = E + R * h + max(0.0, D + A - R) * f  # the hops in a row, then the other frames' CPU
        U = E + (D + A) * f_shared + waiting
        return (max(T1, p / cores * U) if p > cores else T1), U, S

    # The reliable layer's acks: those its window rule asks for, and those answering probes
    # (each with its probe: two frames of CPU, one counted by --stats as an ack).
    A = window_acks(params["network"], transport, sync, p)
    T, U, S = time_with(A)
    probes = 0.0
    if transport in RELIABLE_LAYER:
        for _ in range(20):  # the probes depend on T and add to it: to the fixed point
            probes = probe_acks(sync, p, measured_us or T)
            T_next, U, S = time_with(A + 2 * probes)
            if abs(T_next - T) <= 1e-6 * T:
                T = T_next
                break
            T = T_next
    return T, D + A + probes, U, S


# ---------------------------------------------------------------- calibration

def run(command, timeout):
    print("  $ " + " ".join(command), flush=True)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print("    timed out", flush=True)
        return ""
    if done.returncode != 0:
        print("    failed (%d): %s" % (done.returncode, (done.stderr.strip().splitlines() or [""])[-1]), flush=True)
        return ""
    return done.stdout


def cluster_command(netns, sshd_dir, p, command):
    """command (bsprun ...) run inside the cluster's host 0 with a host file spreading p
    processes evenly over its hosts, as experiments/sync_scaling.sh's hostfile_for does."""
    used = min(p, CLUSTER_HOSTS)
    path = os.path.join(sshd_dir, "calibration_hostfile.%d" % p)
    with open(path, "w") as f:
        for i in range(used):
            f.write("10.77.0.%d slots=%d\n" % (i + 1, (p + used - 1 - i) // used))
    bsprun = os.path.abspath(command[0])
    program = [os.path.abspath(a) if a.startswith("bazel-bin/") else a for a in command[1:]]
    return (["ip", "netns", "exec", netns + "0", bsprun, "--hostfile=" + path,
             "--rsh=ssh -F " + os.path.join(sshd_dir, "ssh_config")] + program)


def packet_sockets():
    """Packet sockets open on the machine now (/proc/net/packet) that a nic frame on lo is
    offered to: before a run, other jobs'. Those bound to every protocol (0003) see every
    frame; those bound to one of the nic transport's 256 loopback EtherTypes (another job's
    processes, transport/nic/ether_types.h) see a 256th of them."""
    try:
        with open("/proc/net/packet") as f:
            protocols = [int(line.split()[3], 16) for line in f.read().splitlines()[1:] if len(line.split()) > 3]
    except (OSError, ValueError):
        return 0
    every = sum(1 for proto in protocols if proto == 0x0003)  # ETH_P_ALL
    ours = sum(1 for proto in protocols
               if LOOPBACK_ETHER_TYPE_BASE <= proto < LOOPBACK_ETHER_TYPE_BASE + LOOPBACK_ETHER_TYPES)
    return every + ours / LOOPBACK_ETHER_TYPES


def descendants(pid):
    """Every process below pid (/proc's parent links)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def footprint(command, p, settle_s=1.0, window_s=0.4, cpu_us=None, name="sync_scaling"):
    """KiB of anonymous memory (heap, stacks, buffers; not code or libraries, which the
    processes share) that each of the p experiments/sync_scaling processes (by name) touches in window_s of
    steady supersteps: the job stopped (SIGSTOP), clear_refs, continued for window_s (or until
    its processes have had cpu_us of CPU time together, whatever else loads the machine),
    stopped again, smaps' Referenced read, continued. A short window (two supersteps' CPU)
    leaves out the parts of rotating buffers a process reaches only over many supersteps.
    Processes that did not run in it (touched nothing) are left out. Page-granular, so
    an upper bound on the bytes a process needs back in the cache after a switch. None where
    it cannot be read (not root, or the job ended early)."""
    print("  $ " + " ".join(command) + "   (pages touched)", flush=True)
    job = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline, pids = settle_s + 30.0, []
        start = time.monotonic()
        while time.monotonic() - start < deadline:
            pids = []
            for pid in [job.pid] + descendants(job.pid):
                try:
                    with open("/proc/%d/comm" % pid) as f:
                        if f.read().strip() == name:
                            pids.append(pid)
                except OSError:
                    pass
            if len(pids) >= p:
                break
            time.sleep(0.1)
        if len(pids) < p:
            return None
        time.sleep(settle_s)  # start-up and warm-up over

        def signal_all(number):
            for pid in pids:
                try:
                    os.kill(pid, number)  # the job's own processes, started here
                except OSError:
                    pass

        cleared = []
        signal_all(signal.SIGSTOP)
        try:
            for pid in pids:
                try:
                    # "1" clears the accessed bits without flushing the TLB, so a page
                    # whose translation is still cached is not marked again when touched:
                    # an 8 MiB buffer swept in a loop counted 1.6-10 MiB. "4" (soft-dirty)
                    # flushes the process's TLB and changes nothing Referenced reads.
                    for request in ("1", "4"):
                        with open("/proc/%d/clear_refs" % pid, "w") as f:
                            f.write(request)
                    cleared.append(pid)
                except OSError:
                    pass  # not one of the job's processes any more
            signal_all(signal.SIGCONT)
            if cpu_us:  # until the job has run cpu_us of CPU (schedstat: ns on a core), at most 2 s
                begin, until = on_cpu_us(pids), time.monotonic() + 2.0
                while on_cpu_us(pids) - begin < cpu_us and time.monotonic() < until:
                    time.sleep(0.0002)
            else:
                time.sleep(window_s)
            signal_all(signal.SIGSTOP)
            sizes = [kib for kib in read_referenced(cleared) if kib > 0]
        finally:
            signal_all(signal.SIGCONT)
        if len(sizes) < max(1, p // 2):
            return None
        print("    touched KiB per process (%s): median %.0f of %d" % (
            "%.0f µs of the job's CPU" % cpu_us if cpu_us else "%.1f ms" % (1000 * window_s),
            statistics.median(sizes), len(sizes)), flush=True)
        return statistics.median(sizes)
    except OSError as error:
        print("    cannot read pages touched: %s" % error, flush=True)
        return None
    finally:
        try:
            job.wait(timeout=120)  # the run ends by itself after its budget
        except subprocess.TimeoutExpired:
            job.kill()  # the job this function started, by its own id
            job.wait()


def on_cpu_us(pids):
    """CPU time the processes have had so far (µs; /proc/PID/schedstat, ns resolution)."""
    total = 0.0
    for pid in pids:
        try:
            with open("/proc/%d/schedstat" % pid) as f:
                total += int(f.read().split()[0]) / 1000.0
        except (OSError, ValueError, IndexError):
            pass
    return total


def read_referenced(pids):
    """Per process, the KiB of its anonymous mappings smaps counts as Referenced."""
    sizes = []
    for pid in pids:
        anon, total = True, 0
        try:
            with open("/proc/%d/smaps" % pid) as f:
                for line in f:
                    fields = line.split()
                    if fields and "-" in fields[0] and not fields[0].endswith(":"):
                        anon = len(fields) < 6 or fields[5].startswith("[")  # no file: heap, stack, anonymous
                    elif fields and fields[0] == "Referenced:" and anon:
                        total += int(fields[1])
        except OSError:
            continue
        sizes.append(total)
    return sizes


def sync_rows(text):
    """kind -> row dict of experiments/sync_scaling's CSV output."""
    lines = [line for line in text.splitlines() if line.strip()]
    header = next((i for i, line in enumerate(lines) if line.startswith("transport,p,kind")), None)
    if header is None:
        return {}
    names = lines[header].split(",")
    rows = {}
    for line in lines[header + 1:]:
        values = line.split(",")
        if len(values) == len(names):
            row = dict(zip(names, values))
            rows[row["kind"]] = row
    return rows


def write_rows(path, rows):
    fields = []
    for row in rows:
        fields += [k for k in row if k not in fields]
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields or ["network"], restval="", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print("wrote " + path)


def read_rows(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def calibrate(args):
    bsprun, program, pingpong, wake = ("bazel-bin/bsplib/bsprun", "bazel-bin/experiments/sync_scaling",
                                       "bazel-bin/bench/layer_pingpong", "bazel-bin/experiments/wake_cost")
    only = [part for part in args.only.split(",") if part]
    for path in (wake,) if only else (bsprun, program, pingpong, wake):
        if not os.access(path, os.X_OK):
            sys.exit("sync_model.py: %s is missing (bazel build //experiments:sync_scaling //bench:layer_pingpong "
                     "//experiments:wake_cost //bsplib:bsprun)" % path)
    if only:
        return calibrate_parts(args, wake, only)
    wanted = args.networks.split(",")
    networks = ([("lo", None)] if "lo" in wanted else []) + (
        [("cluster", args.netns)] if args.netns and "cluster" in wanted else [])
    redone = {(n, t) for n, _ in networks for t in args.transports.split(",")}
    path = os.path.join(args.out, "calibration.csv")
    runs_path = os.path.join(args.out, "calibration_runs.csv")
    # Rows of other networks and transports from an earlier calibration are kept.
    kept = [r for r in read_rows(path) if (r["network"], r["transport"]) not in redone]
    kept_runs = [r for r in read_rows(runs_path) if (r["network"], r["transport"]) not in redone]
    out_rows, out_runs = [], []
    med = statistics.median
    for network, netns in networks:
        for transport in args.transports.split(","):
            print("calibrating %s %s (p = 2, %s; %d repeats)" % (network, transport, ", ".join(map(str, CALIBRATION_PS)),
                                                                 args.repeats), flush=True)
            place = ["--netns=" + netns] if netns else []
            got = {name: [] for name in ("rtt", "rtt_min", "t2", "t2_mean", "t2_min", "u2", "t1", "u1")}
            subset = {}  # (p, kind) -> [(cpu, frames, mean)]
            for _ in range(args.repeats):
                text = run([pingpong, "--transport=" + transport, "--layer=channel", "--size=16",
                            "--repetitions=20000"] + place, 120)
                for line in text.splitlines():
                    if "round_trip_us median=" in line:
                        got["rtt"].append(float(line.split("median=")[1].split()[0]))
                        got["rtt_min"].append(float(line.split("min=")[1].split()[0]))
                base = [bsprun, "-n", "2", "--transport=" + transport, "--sync=dense"] + place
                bench = [program, "--budget-ms=%d" % args.budget_ms]
                rows = sync_rows(run(base + bench, 120))
                if rows:
                    got["t2"].append(float(rows["empty"]["median_us"]))
                    got["t2_mean"].append(float(rows["empty"]["mean_us"]))
                    got["t2_min"].append(float(rows["empty"]["min_us"]))
                    if "cpu_us_per_proc" in rows["empty"]:
                        got["u2"].append(float(rows["empty"]["cpu_us_per_proc"]))
                # Both processes on one core: every wait is a switch to the other.
                rows = sync_rows(run(["taskset", "-c", "0"] + base + bench, 120))
                if rows:
                    got["t1"].append(float(rows["empty"]["mean_us"]))
                    if "cpu_us_per_proc" in rows["empty"]:
                        got["u1"].append(float(rows["empty"]["cpu_us_per_proc"]))
                # The calibration subset for f and q: both protocols at p = 4, 8, 16 on all cores
                # (on the cluster placed as experiments/sync_scaling.sh places its runs).
                for p in CALIBRATION_PS:
                    for sync in SYNCS:
                        foreign = packet_sockets()
                        command = [bsprun, "-n", str(p), "--transport=" + transport, "--sync=" + sync] + bench
                        if netns:
                            command = cluster_command(netns, args.sshd_dir, p, command) if args.sshd_dir else \
                                command[:1] + place + command[1:]
                        rows = sync_rows(run(command, 180))
                        foreign = (foreign + packet_sockets()) / 2
                        for kind, row in rows.items():
                            if "cpu_us_per_proc" in row:
                                switches = (float(row.get("voluntary_switches_per_proc") or 0)
                                            + float(row.get("involuntary_switches_per_proc") or 0))
                                subset.setdefault((p, sync, kind), []).append(
                                    (float(row["cpu_us_per_proc"]), float(row["frames_per_proc"]),
                                     float(row["mean_us"]), foreign, switches))
            # The working set of a process: pages it touches in steady supersteps (once per
            # transport, protocol and p; a run of its own, so the timed runs are undisturbed).
            touched = {}
            for p in CALIBRATION_PS:
                for sync in SYNCS:
                    command = [bsprun, "-n", str(p), "--transport=" + transport, "--sync=" + sync, program,
                               "--kinds=empty", "--budget-ms=%d" % max(4000, 2 * args.budget_ms),
                               "--max-supersteps=100000000"]
                    if netns:
                        command = cluster_command(netns, args.sshd_dir, p, command) if args.sshd_dir else \
                            command[:1] + place + command[1:]
                    # Two supersteps' CPU of the whole job (the timed runs' CPU per process)
                    cpus = [v[0] for v in subset.get((p, sync, "empty"), [])]
                    cpu_us = 2 * p * statistics.median(cpus) if cpus else None
                    kib = footprint(command, p, cpu_us=cpu_us)
                    if kib is None:  # a job slow to start on a loaded machine: once more
                        kib = footprint(command, p, cpu_us=cpu_us)
                    if kib is not None:
                        touched[(p, sync)] = kib
            if not (got["rtt"] and got["t2"] and got["t1"]):
                print("  incomplete: %s %s left out" % (network, transport), flush=True)
                continue
            row = {"network": network, "transport": transport, "repeats": args.repeats,
                   "rtt_median_us": "%.2f" % med(got["rtt"]), "rtt_min_us": "%.2f" % min(got["rtt_min"]),
                   "p2_empty_min_us": "%.2f" % min(got["t2_min"]), "p2_empty_median_us": "%.2f" % med(got["t2"]),
                   "p2_empty_mean_us": "%.2f" % med(got["t2_mean"]),
                   "p2_onecore_empty_mean_us": "%.2f" % med(got["t1"])}
            if got["u2"] and got["u1"]:
                row["p2_empty_cpu_us"] = "%.2f" % med(got["u2"])
                row["p2_onecore_empty_cpu_us"] = "%.2f" % med(got["u1"])
            row["load1"] = open("/proc/loadavg").read().split()[0]
            out_rows.append(row)
            print("  " + ", ".join("%s=%s" % item for item in row.items()), flush=True)
            for (p, sync, kind), values in sorted(subset.items()):
                out_runs.append({"network": network, "transport": transport, "sync": sync, "p": p, "kind": kind,
                                 "cpu_us_per_proc": "%.2f" % med(v[0] for v in values),
                                 "frames_per_proc": "%.3f" % med(v[1] for v in values),
                                 "mean_us": "%.2f" % med(v[2] for v in values),
                                 "foreign_packet_sockets": "%.0f" % med(v[3] for v in values),
                                 "switches_per_proc": "%.3f" % med(v[4] for v in values),
                                 "touched_kib_per_proc": ("%.0f" % touched[(p, sync)]) if (p, sync) in touched else ""})
    write_rows(path, kept + out_rows)
    write_rows(runs_path, kept_runs + out_runs)
    if args.keep_wake:
        return
    # The scheduler's part: bare processes, k = 2 .. 256 on this machine's cores.
    print("calibrating the cost of a wait against processes per core (experiments/wake_cost)", flush=True)
    # Both wait modes (bsplib spins up to SPIN_PER_CORE processes per core and blocks beyond),
    # the rounds (sparse) with working sets of TOUCH_KIB per process, the all-to-all (dense).
    # Spinning where bsplib spins; blocking at every k for the rounds (k = 2 is the refill's
    # reference), beyond the spinning k for the all-to-all.
    wake_rows = []
    spinning, blocking = by_wait(WAKE_PROCS)
    runs = ([["--patterns=rounds", "--waits=spin", procs_flag(spinning), "--touch-kib=%d" % kib] for kib in TOUCH_KIB]
            + [["--patterns=rounds", "--waits=block", procs_flag(WAKE_PROCS), "--touch-kib=%d" % kib] for kib in TOUCH_KIB]
            + [["--patterns=alltoall", "--waits=spin", procs_flag(spinning)],
               ["--patterns=alltoall", "--waits=block", procs_flag(blocking)]]
            + walk_runs() + tcp_alltoall_runs()
            + (cluster_wake_runs(args.netns) if args.netns and "cluster" in wanted else []))
    for _ in range(args.repeats):
        for extra in runs:
            wake_rows += wake_cost_rows(run([wake, "--cpus=%d" % CORES, "--budget-ms=300"] + extra, 900))
    if wake_rows:
        write_rows(os.path.join(args.out, "wake_cost.csv"), wake_rows)


def procs_flag(ks):
    """experiments/wake_cost's --procs for these k."""
    return "--procs=" + ",".join(map(str, ks))


def by_wait(ks):
    """ks split by how bsplib waits at each k: (those where it spins, those where it blocks)."""
    spinning = [k for k in ks if k <= SPIN_PER_CORE * CORES]
    return spinning, [k for k in ks if k not in spinning]


def walk_runs():
    """experiments/wake_cost runs for the walks over per-peer arrays: the rounds, in each wait mode where
    bsplib uses it (blocking at every k: k = 2 is the reference), with WALK_ENTRIES entries
    WALK_STRIDE bytes apart read right after each wait, and timed by themselves."""
    spinning, _ = by_wait(WAKE_PROCS)
    return [["--patterns=rounds", "--waits=" + wait, procs_flag(ks), "--walk-entries=%d" % n,
             "--walk-stride=%d" % WALK_STRIDE]
            for wait, ks in (("spin", spinning), ("block", WAKE_PROCS)) for n in WALK_ENTRIES]


def tcp_alltoall_runs():
    """experiments/wake_cost's all-to-all over kernel TCP (a connection per pair of processes, waited
    on through an epoll set, as the tcp transport beyond 4 processes) in the wait mode bsplib
    uses at each k: WakeCost.tcp_growth sets it against the UDP all-to-all's."""
    spinning, blocking = by_wait(WAKE_PROCS)
    return [["--transport=tcp", "--patterns=alltoall", "--waits=spin", procs_flag(spinning)],
            ["--transport=tcp", "--patterns=alltoall", "--waits=block", procs_flag(blocking)]]


def wake_cost_rows(text):
    lines = [line for line in text.splitlines() if line.strip()]
    if not (lines and lines[0].startswith("pattern,")):
        return []
    names = lines[0].split(",")
    return [dict(zip(names, line.split(","))) for line in lines[1:] if line.count(",") == len(names) - 1]


def cluster_wake_runs(netns):
    """experiments/wake_cost runs on the namespace cluster (its sockets on the hosts netns0..7, each
    host's processes in a session of their own, as under the hosts' sshd): the rounds and the
    all-to-all at the cluster's p, spinning where bsplib spins, blocking beyond; the model
    takes the switch counts of the cluster's points from them."""
    spinning, blocking = by_wait([k for k in WAKE_PROCS if 4 <= k <= 64])
    return [["--patterns=" + pattern, "--waits=" + wait, procs_flag(chosen), "--netns=" + netns,
             "--hosts=%d" % CLUSTER_HOSTS]
            for pattern in ("rounds", "alltoall")
            for wait, chosen in (("spin", spinning), ("block", blocking))]


def calibrate_parts(args, wake, parts):
    """calibrate --only=walk,cluster,tcp: those wake_cost runs alone (walk: walk_runs on lo;
    cluster: cluster_wake_runs on --netns; tcp: tcp_alltoall_runs on lo), replacing the rows of
    that kind in OUT/wake_cost.csv and keeping its other rows (each kind's runs stand alone:
    the walks are timed by themselves, the cluster's runs give switch counts only, the tcp
    all-to-all is set against the udp one only at the same k and wait mode)."""
    path = os.path.join(args.out, "wake_cost.csv")
    runs, drop = [], []
    if "walk" in parts:
        runs += walk_runs()
        drop.append(lambda r: int(r.get("walk_entries") or 0) > 0)
    if "cluster" in parts:
        if not args.netns:
            sys.exit("sync_model.py: --only=cluster needs --netns (a tools/cluster.sh cluster of 8 hosts)")
        runs += cluster_wake_runs(args.netns)
        drop.append(lambda r: int(r.get("hosts") or 0) > 0)
    if "tcp" in parts:
        runs += tcp_alltoall_runs()
        drop.append(lambda r: r.get("transport") == "tcp" and r.get("pattern") == "alltoall")
    kept = [r for r in read_rows(path) if not any(d(r) for d in drop)]
    rows = []
    print("calibrating %s (experiments/wake_cost)" % ", ".join(parts), flush=True)
    for _ in range(args.repeats):
        for extra in runs:
            rows += wake_cost_rows(run([wake, "--cpus=%d" % CORES, "--budget-ms=300"] + extra, 900))
    if rows:
        write_rows(path, kept + rows)


# ---------------------------------------------------------------- report

def parameters(row, runs, wake):
    """The model's parameters for one network and transport (µs)."""
    h = float(row["rtt_median_us"]) / 2
    E = max(float(row["p2_empty_mean_us"]) - float(row["rtt_median_us"]) / 2, 0.0)
    if row.get("p2_onecore_empty_cpu_us"):
        u1 = float(row["p2_onecore_empty_cpu_us"])  # CPU per process and superstep
    else:
        u1 = float(row["p2_onecore_empty_mean_us"]) / 2  # older calibrations: the time, shared by two
    network, transport = row["network"], row["transport"]
    # nic on lo: one EtherType per destination, so its frames meet no other socket up to 256
    # processes (unless other jobs' sockets see them) and f is fitted as udp's and tcp's. On
    # the cluster (sockets bound to every protocol) f = h and beta is fitted: a free f there
    # came out at 0.7 us, below any frame's real cost (the switch costs absorbed the frames).
    with_fanout = transport == "nic" and (network != "lo" or any(
        float(r.get("foreign_packet_sockets") or 0) > 0 for r in runs if int(r["p"]) > CORES))
    params = {"network": network, "transport": transport, "h": h, "E": E, "wake": wake, "beta": 0.0}

    # The working set between two switches, per protocol: X0 + x1 p by least squares over
    # the pages the calibration runs' processes touched (slope at least 0).
    touched = {}
    for sync in SYNCS:
        points = sorted({(int(r["p"]), float(r["touched_kib_per_proc"])) for r in runs
                         if r.get("sync", "sparse") == sync and r.get("touched_kib_per_proc")})
        if len(points) >= 2:
            mp = statistics.mean(p for p, _ in points)
            mx = statistics.mean(x for _, x in points)
            den = sum((p - mp) ** 2 for p, _ in points)
            x1 = max(0.0, sum((p - mp) * (x - mx) for p, x in points) / den) if den > 0 else 0.0
            touched[sync] = (mx - x1 * mp, x1)
        elif points:
            touched[sync] = (points[0][1], 0.0)
    params["touched"] = touched

    # rho per protocol and wait mode: bsplib's switches measured in the calibration runs over
    # those of bare processes doing the pattern at the same p.
    measured, bare = {}, {}
    for run_row in runs:
        p, sync = int(run_row["p"]), run_row.get("sync", "sparse")
        if p > CORES and run_row.get("switches_per_proc"):
            key = (sync, wake.mode(p))
            measured[key] = measured.get(key, 0.0) + float(run_row["switches_per_proc"])
            bare[key] = bare.get(key, 0.0) + bare_switches(wake, sync, protocol(sync, run_row["kind"], p)[2], p, network)
    params["rho"] = {key: measured[key] / bare[key] for key in measured if bare[key] > 0}

    # The calibration subset (both protocols at p = 4, 8, 16; runs of their own, never the
    # points compared): per run the frames F, the switches S (measured by getrusage where the
    # run has them, else the model's), what wake_cost adds to them beyond the calibration p
    # (the refill of the working set; no growth at the reference p), and nic's sockets per frame.
    rows = []
    for run_row in runs:
        p, kind, sync = int(run_row["p"]), run_row["kind"], run_row.get("sync", "sparse")
        if p <= CORES:
            continue
        _, _, W = protocol(sync, kind, p)
        S = (float(run_row["switches_per_proc"]) if run_row.get("switches_per_proc")
             else switches(params, sync, W, p, CORES))
        # nic: the sockets a frame is offered to, other jobs' on lo included.
        sockets = fanout(network, p) + (float(run_row.get("foreign_packet_sockets") or 0) if network == "lo" else 0.0)
        F = float(run_row["frames_per_proc"])
        rows.append((sync, wake.mode(p), F, S, switch_extra(params, sync, p, S),
                     sockets, float(run_row["cpu_us_per_proc"]) - E - F * connection_growth(params, sync, p)))
    # f (for nic: f = h, the p = 2 hop, and beta) from the dense runs (p - 1 frames: the frames
    # dominate), the cost c of a switch per wait mode from the sparse ones (a few frames, r
    # waits: the switches dominate); each given the other's current value, alternately, until
    # they settle:  U - E = F (f + beta sockets) + S (c_mode + extra).
    s2 = max(u1 - E - h, 0.0)  # a switch at p = 2 pinned to one core: the start for c
    c = {"spin": s2, "block": s2}
    f, beta = h, 0.0
    dense = [r for r in rows if r[0] == "dense"]
    for _ in range(100):
        xs = [(F, F * sockets, r - S * c[mode] - extra) for _, mode, F, S, extra, sockets, r in dense]
        if xs and with_fanout:
            den = sum(x2 * x2 for _, x2, _ in xs)
            f = h
            beta = max(0.0, sum(x2 * (r - h * x1) for x1, x2, r in xs) / den) if den > 0 else 0.0
        elif xs:
            den = sum(x1 * x1 for x1, _, _ in xs)
            f = sum(x1 * r for x1, _, r in xs) / den if den > 0 else h
        if f <= 0:
            f = h
        for mode in ("spin", "block"):
            num = den = 0.0
            for sync, m, F, S, extra, sockets, r in rows:
                if sync == "sparse" and m == mode:
                    num += S * (r - F * (f + beta * sockets) - extra)
                    den += S * S
            if den > 0:
                c[mode] = max(num / den, 0.0)
    if not any(r[0] == "sparse" and r[1] == "block" for r in rows):
        c["block"] = c["spin"]  # an older calibration: no blocking run
    params.update(f=f, beta=beta, s2=s2, c_spin=c["spin"], c_block=c["block"], fitted_on=len(rows))
    return params


def model_ps(largest=10000):
    ps, p = [], 2
    while p <= largest:
        ps.append(p)
        p = p * 2 if p < 8 else int(round(p * 1.25))
    return sorted(set(ps + [largest]))


def fmt_us(us):
    if us >= 1e6:
        return "%.2f s" % (us / 1e6)
    if us >= 1000:
        return "%.2f ms" % (us / 1000)
    return "%.1f µs" % us


def report(args):
    for name in ("calibration.csv", "sync_scaling.csv"):
        if not os.path.exists(os.path.join(args.out, name)):
            sys.exit("sync_model.py: no %s in %s (experiments/sync_scaling.sh makes both; calibrate makes the first)"
                     % (name, args.out))
    wake = WakeCost(read_rows(os.path.join(args.out, "wake_cost.csv")))
    if not wake.points:
        print("sync_model.py: no wake_cost.csv in %s: one switch per wait and no scheduler growth (calibrate "
              "measures them)"
              % args.out, file=sys.stderr)
    runs = read_rows(os.path.join(args.out, "calibration_runs.csv"))
    params = {}
    for r in read_rows(os.path.join(args.out, "calibration.csv")):
        key = (r["network"], r["transport"])
        params[key] = parameters(r, [x for x in runs if (x["network"], x["transport"]) == key], wake)
    # c is the library's own work per switch, the same code on every network: a network
    # calibrated without the runs (an older calibration) takes the transport's c from one with.
    for (network, transport), par in params.items():
        donors = [other for (n, t), other in sorted(params.items()) if t == transport and other["fitted_on"] > 0]
        if par["fitted_on"] == 0 and donors:
            par["c_spin"], par["c_block"] = donors[0]["c_spin"], donors[0]["c_block"]
            par["c_note"] = " from " + donors[0]["network"]
    with open(os.path.join(args.out, "sync_scaling.csv")) as f:
        rows = list(csv.DictReader(f))
    # A point measured more than once (sync_scaling.sh --append, to rerun points taken
    # while other work loaded the shared machine): the fastest run counts (best of N, as
    # elsewhere in bench/: interference only adds time).
    best = {}
    for row in rows:
        key = (row["network"], row["sync"], row["transport"], row["p"], row["kind"])
        if key not in best or float(row["mean_us"]) < float(best[key]["mean_us"]):
            best[key] = row
    measured = list(best.values())

    # Curves.
    with open(os.path.join(args.out, "model.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["network", "transport", "sync", "kind", "p", "model_us", "model_frames_per_proc",
                         "model_cpu_us_per_proc", "model_switches_per_proc", "one_core_each_us"])
        for (network, transport), par in sorted(params.items()):
            for sync in SYNCS:
                for kind in KINDS:
                    for p in model_ps():
                        T, frames, U, S = predict(par, transport, sync, kind, p)
                        T1 = predict(par, transport, sync, kind, p, cores=10 ** 9)[0]
                        writer.writerow([network, transport, sync, kind, p, "%.2f" % T, "%.1f" % frames, "%.2f" % U,
                                         "%.2f" % S, "%.2f" % T1])

    # Every measured point against the model.
    comparison = []
    for row in measured:
        key = (row["network"], row["transport"])
        if key not in params:
            continue
        p = int(row["p"])
        T, frames, U, S = predict(params[key], row["transport"], row["sync"], row["kind"], p)
        mean = float(row["mean_us"])
        extra = {"model_us": "%.2f" % T, "model_frames_per_proc": "%.1f" % frames,
                 "error_pct": "%.0f" % (100 * (T - mean) / mean), "model_cpu_us_per_proc": "", "cpu_error_pct": "",
                 "share": "", "model_switches_per_proc": "%.2f" % S}
        # CPU per process and superstep (sync_scaling.csv from experiments/sync_scaling with the
        # getrusage columns): the model's U against it, where processes share cores.
        if row.get("cpu_us_per_proc") and p > CORES:
            cpu = float(row["cpu_us_per_proc"])
            U = predict(params[key], row["transport"], row["sync"], row["kind"], p, measured_us=mean)[2]
            extra["model_cpu_us_per_proc"] = "%.2f" % U
            extra["cpu_error_pct"] = "%.0f" % (100 * (U - cpu) / cpu)
            extra["share"] = "%.2f" % (p * cpu / (CORES * mean))  # of the C cores, the job had
        comparison.append(dict(row, **extra))
    write_rows(os.path.join(args.out, "comparison.csv"), comparison)

    write_table(args, params, comparison)
    if args.plots:
        plot(args, params, measured)


def write_table(args, params, comparison):
    ps = (16, 64, 256)
    lines = ["Parameters (µs): h one hop (half the channel's busy-polling round trip), f a frame's CPU, sent and "
             "received, and for nic β a frame's cost per other packet socket on its interface (fitted on the "
             "dense runs at p = 4, 8, 16 only), E the engine's work per superstep (p = 2 means), c the library's "
             "CPU per context switch, spinning (p ≤ 8) and blocking (p > 8; fitted on the sparse runs at p = 4, 8, "
             "16 only), X the KiB of memory a process touches (pages, measured at p = 4, 8, 16: X0 + x1 p), and "
             "from experiments/wake_cost at p = 16, 64, 256: the scheduler's growth plus the refill of X0 plus the walks "
             "over per-peer arrays per switch (sparse), switches per superstep (dense; the cluster's from wake_cost on "
             "its namespaces). The model: T = max(T1, (p/2) U), U = E + (D + A) "
             "(f + β fan-out + φ) + S (c + growth + refill + walk) per process and superstep, φ (dense tcp only) what "
             "kernel TCP's cost per message adds beyond UDP's at k = p over k = 16 (experiments/wake_cost's all-to-alls), "
             "A the reliable layer's acks "
             "(its window rule, and dense probes' answers with their probes) (experiments/sync_model.py).",
             "",
             "| network | transport | h | f | β | E | c spin | c block | X sparse | X dense | "
             + " | ".join("g + refill(X0) + walk per switch at %d" % p for p in ps) + " | " + " | ".join("dense S at %d" % p for p in ps)
             + " | " + " | ".join("dense φ at %d" % p for p in ps) + " |",
             "|---|---|---|---|---|---|---|---|---|---|" + "---|" * (3 * len(ps))]
    for (network, transport), par in sorted(params.items()):
        xs = ["%.0f + %.1f p" % par["touched"][sync] if sync in par["touched"] else "—" for sync in SYNCS]
        lines.append("| %s | %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.1f (%d runs%s) | %s | %s | %s | %s | %s |"
                     % (network, transport, par["h"], par["f"], par["beta"], par["E"], par["c_spin"], par["c_block"],
                        par["fitted_on"], par.get("c_note", ""), xs[1], xs[0],
                        " | ".join("%.1f" % per_switch_extra(par, "sparse", p) for p in ps),
                        " | ".join("%.1f" % switches(par, "dense", 1, p, CORES) for p in ps),
                        " | ".join("%.2f" % connection_growth(par, "dense", p) for p in ps)))
    lines += ["", "Measured (mean / median per superstep) against the model; frames sent per process per "
              "superstep, measured (model); error = (model − mean) / mean; where the CSV has it, the CPU per "
              "process and superstep, measured (model), and the share of the 2 cores the job had, "
              "p·CPU / (2·mean): below 1 other work took the rest.", "",
              "| network | transport | p | kind | dense mean / median | dense model | err | dense frames | dense CPU, share | "
              "dense switches | sparse mean / median | sparse model | err | sparse frames | sparse CPU, share | "
              "sparse switches |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    index = {(r["network"], r["transport"], int(r["p"]), r["kind"], r["sync"]): r for r in comparison}
    keys = sorted({(k[0], k[1], k[2], k[3]) for k in index}, key=lambda k: (k[0] != "lo", k[0], k[1], k[2], k[3]))
    for network, transport, p, kind in keys:
        cells = [network, transport, str(p), kind]
        for sync in SYNCS:
            r = index.get((network, transport, p, kind, sync))
            if r is None:
                cells += ["—"] * 6
                continue
            cpu, switched = "—", "—"
            if r.get("voluntary_switches_per_proc"):  # measured (model)
                switched = "%.1f (%s)" % (float(r["voluntary_switches_per_proc"])
                                          + float(r.get("involuntary_switches_per_proc") or 0),
                                          r["model_switches_per_proc"])
            if r.get("cpu_error_pct"):
                cpu = "%.0f (%.0f) %+d%%, %s" % (float(r["cpu_us_per_proc"]), float(r["model_cpu_us_per_proc"]),
                                                 int(float(r["cpu_error_pct"])), r["share"])
            cells += ["%s / %s" % (fmt_us(float(r["mean_us"])), fmt_us(float(r["median_us"]))),
                      fmt_us(float(r["model_us"])), "%+d%%" % int(float(r["error_pct"])),
                      "%.1f (%s)" % (float(r["frames_per_proc"]), r["model_frames_per_proc"]), cpu, switched]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [""] + summary(comparison)
    path = os.path.join(args.out, "sync_scaling.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote " + path)
    print("\n".join(summary(comparison)))


def summary(comparison):
    """How many points are within 30%, per network, of the time and (where measured) of the CPU."""
    out = []
    for network in sorted({r["network"] for r in comparison}, key=lambda n: (n != "lo", n)):
        rows = [r for r in comparison if r["network"] == network]
        within = sum(1 for r in rows if abs(float(r["error_pct"])) <= 30)
        worst = sorted(rows, key=lambda r: -abs(float(r["error_pct"])))[:3]
        text = "%s: time within 30%% of the model at %d of %d points; worst %s." % (
            network, within, len(rows), ", ".join("%s %s %s p=%s %+d%%" % (r["transport"], r["sync"], r["kind"], r["p"],
                                                                        int(float(r["error_pct"]))) for r in worst))
        cpu_rows = [r for r in rows if r.get("cpu_error_pct")]
        if cpu_rows:
            cpu_within = sum(1 for r in cpu_rows if abs(float(r["cpu_error_pct"])) <= 30)
            shares = sorted(float(r["share"]) for r in cpu_rows)
            text += (" CPU per process and superstep within 30%% at %d of %d points (p > 2); the job had %.2f–%.2f "
                     "(median %.2f) of the 2 cores." % (cpu_within, len(cpu_rows), shares[0], shares[-1],
                                                         statistics.median(shares)))
        out.append(text)
    return out


def plot(args, params, measured):
    data_dir = os.path.join(args.out, "plot_data")
    os.makedirs(data_dir, exist_ok=True)
    colours = {("dense", "empty"): "#1f77b4", ("dense", "neighbour"): "#17becf",
               ("sparse", "empty"): "#d62728", ("sparse", "neighbour"): "#ff7f0e"}
    for (network, transport), par in sorted(params.items()):
        series = []
        for sync in SYNCS:
            for kind in KINDS:
                model_file = os.path.join(data_dir, "model_%s_%s_%s_%s.dat" % (network, transport, sync, kind))
                with open(model_file, "w") as f:
                    for p in model_ps():
                        T = predict(par, transport, sync, kind, p)[0]
                        T1 = predict(par, transport, sync, kind, p, cores=10 ** 9)[0]
                        f.write("%d %.3f %.3f\n" % (p, T, T1))
                points = [r for r in measured if r["network"] == network and r["transport"] == transport
                          and r["sync"] == sync and r["kind"] == kind]
                point_file = os.path.join(data_dir, "measured_%s_%s_%s_%s.dat" % (network, transport, sync, kind))
                with open(point_file, "w") as f:
                    for r in sorted(points, key=lambda r: int(r["p"])):
                        f.write("%s %s %s\n" % (r["p"], r["mean_us"], r["median_us"]))
                colour = colours[(sync, kind)]
                series.append('"%s" using 1:2 with lines lw 2 lc rgb "%s" title "%s %s, model (2 cores)"'
                              % (model_file, colour, sync, kind))
                series.append('"%s" using 1:3 with lines lw 1 dt 2 lc rgb "%s" title "%s %s, model (a core each)"'
                              % (model_file, colour, sync, kind))
                if points:
                    series.append('"%s" using 1:2 with points pt 7 ps 1.2 lc rgb "%s" title "%s %s, measured mean"'
                                  % (point_file, colour, sync, kind))
        base = os.path.join(args.out, "sync_scaling_%s_%s" % (network, transport))
        for terminal, extension in (("pngcairo size 1100,700 font 'sans,11'", "png"), ("svg size 1100,700", "svg")):
            script = """set terminal %s noenhanced
set output "%s.%s"
set title "Superstep time against p: %s, %s (model: lines; measured: points)"
set xlabel "processes p"
set ylabel "time per superstep (µs)"
set logscale xy
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set key top left font ",9"
plot %s
""" % (terminal, base, extension, transport, network, ", ".join(series))
            try:
                done = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
            except FileNotFoundError:
                print("gnuplot is not installed: no plots (tools/setup.sh installs it)", file=sys.stderr)
                return
            if done.returncode != 0:
                print("gnuplot failed: " + done.stderr.strip(), file=sys.stderr)
        print("wrote %s.png and .svg" % base)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("calibrate", help="measure the parameters (p = 2 runs, both protocols at p = 4, 8, 16, wake_cost)")
    c.add_argument("--out", default="results/sync_scaling")
    c.add_argument("--transports", default="udp,nic,tcp")
    c.add_argument("--budget-ms", type=int, default=1000)
    c.add_argument("--repeats", type=int, default=3)
    c.add_argument("--networks", default="lo", help="lo,cluster (cluster needs --netns)")
    c.add_argument("--netns", default="", help="also calibrate on this namespace cluster (tools/cluster.sh)")
    c.add_argument("--keep-wake", action="store_true", help="keep OUT/wake_cost.csv (recalibrating some transports: "
                   "the scheduler's part, bare processes, does not depend on them)")
    c.add_argument("--only", default="", help="walk,cluster,tcp: only these wake_cost runs (the walks over per-peer "
                   "arrays; the patterns on the --netns cluster; the all-to-all over kernel TCP), replacing those in "
                   "OUT/wake_cost.csv, keeping the rest")
    c.add_argument("--sshd-dir", default="", help="the cluster's sshd directory (sync_scaling.sh): the p = 4..16 "
                   "runs spread over its hosts by a host file; without it they place one per host by --netns")
    r = sub.add_parser("report", help="model, table and plots from OUT/calibration.csv and OUT/sync_scaling.csv")
    r.add_argument("--out", default="results/sync_scaling")
    r.add_argument("--no-plots", dest="plots", action="store_false", help="no gnuplot plots (the tables only)")
    args = parser.parse_args()
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    args.out = os.path.normpath(os.path.join(root, args.out))  # relative to the workspace; an absolute --out stays
    if args.command == "calibrate":
        os.chdir(root)  # the commands it runs name bazel-bin/... from the workspace
        os.makedirs(args.out, exist_ok=True)
        calibrate(args)
    else:
        os.makedirs(args.out, exist_ok=True)
        report(args)


if __name__ == "__main__":
    main()
