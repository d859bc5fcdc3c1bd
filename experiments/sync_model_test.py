#!/usr/bin/env python3
"""experiments/sync_model_test.py: the superstep-cost model's calibration recovers known parameters.

Calibration runs made by the model itself from chosen f, the switch costs c (spinning and
blocking), the working sets and (for nic) beta must give them back from parameters(); the
wake_cost terms follow the spin policy's wait mode and the working set; report must read the files experiments/sync_scaling.sh and calibrate
write (old calibrations without the CPU columns too) and find every point of a sweep made
by the model within 30% of it; the walks over per-peer arrays follow the code's counts and
wake_cost's timed walks, and the cluster takes its switch counts from its own wake_cost runs;
the constants the model takes from the C++ code still match it. Hermetic: the inputs are
synthetic and report draws no plots (experiments/footprint_test.py measures real processes).
"""
import csv
import math
import importlib.util
import os
import re
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("sync_model", os.path.join(HERE, "sync_model.py"))
model = importlib.util.module_from_spec(spec)
spec.loader.exec_module(model)

def wake_rows():
    """experiments/wake_cost rows: rounds in both wait modes with working sets of 0, 128 and 512 KiB (the
    refill of a working set grows once the k processes' sets outgrow the caches) and the all-to-all."""
    rows = []
    for k in (2, 4, 8, 16, 32, 64, 128, 256):
        for wait in ("spin", "block"):
            base = 5.0 + 0.5 * math.log2(k) + (1.0 if wait == "block" else 0.0)
            for touch in (0, 128, 512):
                refill = touch / 512.0 * max(0.0, math.log2(k) - 3) * 4.0
                rows.append({"pattern": "rounds", "wait": wait, "k": str(k), "cpus": "2", "touch_kib": str(touch),
                             "rusage_cpu_us_per_message": str(base + touch / 100.0 + refill),
                             "voluntary_cs_per_message": "0.5" if wait == "block" else "0.0",
                             "involuntary_cs_per_message": "0.0" if wait == "block" else "0.6"})
            rows.append({"pattern": "alltoall", "wait": wait, "k": str(k), "cpus": "2", "touch_kib": "0",
                         "rusage_cpu_us_per_message": str(base), "voluntary_cs_per_message": "0.1",
                         "involuntary_cs_per_message": "0.01"})
    return rows


WAKE = wake_rows()
TOUCHED = {"dense": (60.0, 5.0), "sparse": (90.0, 0.5)}  # KiB: X0 + x1 p


def calibration_row(network, transport, h, E, u1):
    return {"network": network, "transport": transport, "rtt_median_us": str(2 * h), "rtt_min_us": str(2 * h),
            "p2_empty_min_us": str(E + h), "p2_empty_median_us": str(E + h), "p2_empty_mean_us": str(E + h),
            "p2_onecore_empty_mean_us": str(2 * u1), "p2_onecore_empty_cpu_us": str(u1)}


def synthetic_runs(truth, network, transport, foreign=0):
    """The calibration subset as the model says it would be measured."""
    runs = []
    params = dict(truth, network=network, transport=transport, touched=TOUCHED)
    for p in model.CALIBRATION_PS:
        for sync in model.SYNCS:
            for kind in model.KINDS:
                D, _, W = model.protocol(sync, kind, p)
                sockets = model.fanout(network, p) + foreign
                S = model.switches(params, sync, W, p, model.CORES)
                c = truth["c_" + params["wake"].mode(p)]
                f_frame = truth["f"] + truth["beta"] * sockets + model.connection_growth(params, sync, p)
                U = truth["E"] + D * f_frame + S * c + model.switch_extra(params, sync, p, S)
                x0, x1 = TOUCHED[sync]
                runs.append({"network": network, "transport": transport, "sync": sync, "p": str(p), "kind": kind,
                             "cpu_us_per_proc": str(U), "frames_per_proc": str(D), "mean_us": str(p / 2 * U),
                             "foreign_packet_sockets": str(foreign), "switches_per_proc": str(S),
                             "touched_kib_per_proc": str(x0 + x1 * p)})
    return runs


class CalibrationTest(unittest.TestCase):
    def check(self, transport, beta, foreign=0, f=None):
        wake = model.WakeCost(WAKE)
        h, E = 5.0, 1.5
        if f is None:  # with other sockets to price, the model takes nic's frame from the p = 2 hop
            f = h if transport == "nic" else 7.0
        truth = {"h": h, "E": E, "f": f, "c_spin": 3.0, "c_block": 11.0, "beta": beta, "wake": wake}
        row = calibration_row("lo", transport, h, E, u1=E + f + 2.0)
        got = model.parameters(row, synthetic_runs(truth, "lo", transport, foreign), wake)
        for name in ("f", "beta", "c_spin", "c_block", "E", "h"):
            self.assertAlmostEqual(got[name], truth[name], delta=1e-6 + 1e-6 * abs(truth[name]), msg=name)
        for sync in model.SYNCS:
            for got_x, want_x in zip(got["touched"][sync], TOUCHED[sync]):
                self.assertAlmostEqual(got_x, want_x, delta=1e-6)
        self.assertEqual(set(got["rho"].values()), {1.0})  # the runs switched as wake_cost's processes

    def test_engine_work_from_the_p2_means(self):
        # E is the mean p = 2 superstep less half the median round trip (the model predicts
        # means), not the minimum less half the minimum round trip
        wake = model.WakeCost(WAKE)
        row = dict(calibration_row("lo", "tcp", 5.0, 1.5, 10.5), rtt_min_us="8.0", p2_empty_min_us="5.0",
                   p2_empty_mean_us="9.0")
        self.assertAlmostEqual(model.parameters(row, [], wake)["E"], 9.0 - 5.0)

    def test_rho_scales_the_bare_switches_to_the_calibration_runs(self):
        wake = model.WakeCost(WAKE)
        truth = {"h": 5.0, "E": 1.5, "f": 7.0, "c_spin": 3.0, "c_block": 11.0, "beta": 0.0, "wake": wake}
        runs = synthetic_runs(truth, "lo", "tcp")
        for r in runs:
            if r["sync"] == "dense" and int(r["p"]) == 16:
                r["switches_per_proc"] = str(0.5 * float(r["switches_per_proc"]))
        got = model.parameters(calibration_row("lo", "tcp", 5.0, 1.5, 10.5), runs, wake)
        self.assertAlmostEqual(got["rho"][("dense", "block")], 0.5)
        self.assertAlmostEqual(got["rho"][("sparse", "block")], 1.0)
        self.assertAlmostEqual(model.switches(got, "dense", 1, 64, model.CORES), 0.5 * 0.11 * 63)

    def test_tcp_recovers_f_and_the_switch_costs(self):
        self.check("tcp", beta=0.0)

    def test_nic_recovers_beta_with_other_jobs_sockets(self):
        self.check("nic", beta=0.3, foreign=40)

    def test_nic_on_lo_offers_a_frame_to_its_destinations_socket_alone(self):
        # One EtherType per destination on lo: up to 256 processes a frame is offered to its
        # destination's socket alone, so beta has nothing to price there.
        self.assertEqual([model.fanout("lo", p) for p in (2, 16, 256, 257, 1024)], [0, 0, 0, 1, 3])
        self.assertEqual(model.fanout("cluster", 64), 6)
        self.check("nic", beta=0.0, foreign=0, f=7.0)  # f fitted, not taken from h

    def test_wait_mode_follows_the_spin_policy(self):
        wake = model.WakeCost(WAKE)
        self.assertEqual([wake.mode(k) for k in (2, 8, 9, 16, 256)], ["spin", "spin", "block", "block", "block"])
        self.assertAlmostEqual(wake.switches("rounds", 8), 0.6)  # involuntary: a spinning wait yields
        self.assertAlmostEqual(wake.switches("rounds", 64), 0.5)  # voluntary: a blocking wait sleeps
        self.assertAlmostEqual(wake.switches("alltoall", 64), 0.11 * 63)  # per round of k - 1 messages

    def test_refill_grows_with_the_working_set_and_k(self):
        wake = model.WakeCost(WAKE)
        self.assertEqual(wake.refill(64, 0), 0.0)
        self.assertEqual(wake.refill(2, 512), 0.0)
        self.assertAlmostEqual(wake.refill(64, 512), 4.0 * 3)  # the synthetic rows' refill at k = 64
        self.assertAlmostEqual(wake.refill(64, 256), 4.0 * 3 / 2)  # linear between the working sets
        values = [wake.refill(k, 300) for k in (16, 32, 64, 128, 256, 5000)]
        self.assertEqual(values, sorted(values))
        self.assertEqual(wake.growth(16), 0.0)  # the blocking calibration point
        self.assertGreater(wake.growth(256), 0.0)

    def test_older_wake_cost_with_one_mode_only(self):
        rows = [r for r in WAKE if r["pattern"] == "rounds" and r["wait"] == "spin" and r["touch_kib"] == "0"]
        wake = model.WakeCost(rows)
        self.assertAlmostEqual(wake.switches("rounds", 64), 0.6)
        self.assertIsNone(wake.switches("alltoall", 64))
        self.assertEqual(wake.refill(64, 512), 0.0)

    def test_protocol_counts(self):
        self.assertEqual(model.protocol("dense", "empty", 16), (15, 1, 1))
        self.assertEqual(model.protocol("sparse", "empty", 16), (4, 4, 4))
        self.assertEqual(model.protocol("sparse", "neighbour", 16), (4, 4, 4))  # the word rides with round 0
        self.assertEqual(model.protocol("sparse", "empty", 17), (5, 5, 5))


def walk_rows():
    """wake_cost --walk-entries rows: the walk's own time per round, 1 ns an entry where the array
    stays in the caches (k <= 16), growing by 10 ns an entry per doubling of k beyond."""
    rows = []
    for k in (2, 4, 8, 16, 32, 64, 128, 256):
        for wait in ("spin", "block"):
            for n in model.WALK_ENTRIES:
                per_entry = 0.001 + 0.010 * max(0.0, math.log2(k) - 4)
                rows.append({"pattern": "rounds", "wait": wait, "k": str(k), "cpus": "2", "touch_kib": "0",
                             "rusage_cpu_us_per_message": "99", "voluntary_cs_per_message": "0.5",
                             "involuntary_cs_per_message": "0.0", "walk_entries": str(n),
                             "walk_stride": str(model.WALK_STRIDE), "walk_us_per_round": str(n * per_entry)})
    return rows


def cluster_rows(per_message):
    """wake_cost rows on the namespace cluster (hosts = 8): the all-to-all's switches per message."""
    return [{"pattern": "alltoall", "wait": wait, "k": str(k), "cpus": "2", "touch_kib": "0", "hosts": "8",
             "rusage_cpu_us_per_message": "50", "voluntary_cs_per_message": str(per_message(k)),
             "involuntary_cs_per_message": "0"}
            for k in (4, 8, 16, 32, 64) for wait in ("spin", "block")]


def tcp_alltoall_rows(extra):
    """wake_cost --transport=tcp all-to-all rows: the udp all-to-all's CPU per message plus extra(k, wait)."""
    rows = []
    for r in WAKE:
        if r["pattern"] == "alltoall":
            k = int(r["k"])
            rows.append(dict(r, transport="tcp",
                             rusage_cpu_us_per_message=str(float(r["rusage_cpu_us_per_message"]) + extra(k, r["wait"]))))
    return rows


class TcpConnectionTest(unittest.TestCase):
    # Kernel TCP's per-message cost over UDP's: 1 us at every k spinning; blocking, 0.5 us
    # more for each doubling of k beyond 16.
    EXTRA = staticmethod(lambda k, wait: 1.0 if wait == "spin" else 1.0 + 0.5 * max(0.0, math.log2(k) - 4))

    def test_growth_beyond_the_calibration_p_of_the_mode(self):
        wake = model.WakeCost(WAKE + tcp_alltoall_rows(self.EXTRA))
        self.assertEqual([wake.tcp_growth(k) for k in (2, 8, 16)], [0.0, 0.0, 0.0])  # the gap is f's there
        self.assertAlmostEqual(wake.tcp_growth(64), 1.0)
        self.assertAlmostEqual(wake.tcp_growth(256), 2.0)
        self.assertAlmostEqual(wake.tcp_growth(1024), 3.0)  # extrapolated in log2 k
        self.assertEqual(model.WakeCost(WAKE).tcp_growth(256), 0.0)  # no tcp runs: no term
        # The tcp rows stay out of the udp series the switches and the growth come from.
        plain = model.WakeCost(WAKE)
        self.assertAlmostEqual(wake.switches("alltoall", 64), plain.switches("alltoall", 64))
        self.assertAlmostEqual(wake.growth(256), plain.growth(256))

    def test_dense_tcp_frames_pay_it_and_nothing_else_does(self):
        wake = model.WakeCost(WAKE + tcp_alltoall_rows(self.EXTRA))
        params = {"transport": "tcp", "wake": wake}
        self.assertAlmostEqual(model.connection_growth(params, "dense", 256), 2.0)
        self.assertEqual(model.connection_growth(params, "sparse", 256), 0.0)
        self.assertEqual(model.connection_growth(dict(params, transport="udp"), "dense", 256), 0.0)
        truth = {"h": 5.0, "E": 1.5, "f": 7.0, "c_spin": 3.0, "c_block": 11.0, "beta": 0.0, "network": "lo",
                 "transport": "tcp", "touched": TOUCHED}
        with_term = model.predict(dict(truth, wake=wake), "tcp", "dense", "empty", 256)
        without = model.predict(dict(truth, wake=model.WakeCost(WAKE)), "tcp", "dense", "empty", 256)
        self.assertAlmostEqual(with_term[2] - without[2], 255 * 2.0)  # CPU: each of the p - 1 frames
        self.assertEqual(model.predict(dict(truth, wake=wake), "tcp", "sparse", "empty", 256)[2],
                         model.predict(dict(truth, wake=model.WakeCost(WAKE)), "tcp", "sparse", "empty", 256)[2])

    def test_calibration_is_fitted_net_of_it(self):
        # Spinning, the gap grows from k = 4 to 8: the dense runs at p = 8 carry it, and f comes back.
        extra = lambda k, wait: (0.25 * math.log2(k) if wait == "spin" else 1.0 + 0.5 * max(0.0, math.log2(k) - 4))
        wake = model.WakeCost(WAKE + tcp_alltoall_rows(extra))
        self.assertAlmostEqual(wake.tcp_growth(8), 0.25)
        truth = {"h": 5.0, "E": 1.5, "f": 7.0, "c_spin": 3.0, "c_block": 11.0, "beta": 0.0, "wake": wake}
        got = model.parameters(calibration_row("lo", "tcp", 5.0, 1.5, 10.5), synthetic_runs(truth, "lo", "tcp"), wake)
        for name in ("f", "c_spin", "c_block"):
            self.assertAlmostEqual(got[name], truth[name], delta=1e-6, msg=name)


class WalkTest(unittest.TestCase):
    """The library's walks over its per-peer arrays after a wake-up (bsplib/engine.cc pump,
    tcp's receive and flush, the reliable layer's active links in a dense superstep)."""

    def test_walked_entries_follow_the_code(self):
        # The sparse protocol's passes visit only the streams written and the peers with work.
        self.assertEqual(model.walked_entries("udp", "sparse", 257), 0)
        self.assertEqual(model.walked_entries("tcp", "sparse", 257), 0)
        self.assertAlmostEqual(model.walked_entries("nic", "dense", 257), 4 * 256)
        self.assertAlmostEqual(model.walked_entries("tcp", "dense", 257), 2 * 256)
        self.assertEqual(model.walked_entries("udp", "dense", 1), 0)

    def test_walk_refill_from_the_timed_walks(self):
        wake = model.WakeCost(WAKE + walk_rows())
        self.assertEqual(wake.walk_refill(2, 500), 0.0)
        self.assertAlmostEqual(wake.walk_refill(16, 500), 0.0)  # in the caches: as at k = 2
        self.assertAlmostEqual(wake.walk_refill(256, 500), 500 * 0.040)  # 4 doublings beyond 16
        self.assertAlmostEqual(wake.walk_refill(256, 2048), 2048 * 0.040)  # proportional beyond 1024
        self.assertEqual(model.WakeCost(WAKE).walk_refill(256, 500), 0.0)  # no walk runs: no term
        # the walk rows are not rounds without a working set: the other terms are unchanged
        self.assertAlmostEqual(wake.cpu(64), model.WakeCost(WAKE).cpu(64))

    def test_predicted_cpu_has_the_walk_per_switch(self):
        truth = {"h": 5.0, "E": 1.5, "f": 7.0, "c_spin": 3.0, "c_block": 11.0, "beta": 0.0, "network": "lo",
                 "transport": "tcp", "touched": TOUCHED}
        without = dict(truth, wake=model.WakeCost(WAKE))
        with_walk = dict(truth, wake=model.WakeCost(WAKE + walk_rows()))
        for sync in model.SYNCS:
            p = 256
            U0, S0 = model.predict(without, "tcp", sync, "empty", p)[2:]
            U1, S1 = model.predict(with_walk, "tcp", sync, "empty", p)[2:]
            per_wait = with_walk["wake"].switches("rounds", p)
            walk = model.walked_entries("tcp", sync, p) * 0.040 / per_wait
            self.assertAlmostEqual(S1, S0)
            self.assertAlmostEqual(U1 - U0, S1 * walk, delta=1e-6 * U1)


class ClusterSwitchTest(unittest.TestCase):
    """The cluster's switch counts from wake_cost on its namespaces (a session per host)."""

    def test_cluster_rows_give_the_cluster_its_switches(self):
        wake = model.WakeCost(WAKE + cluster_rows(lambda k: 0.01 * k))
        self.assertAlmostEqual(wake.switches_on("cluster", "alltoall", 64), 0.64 * 63)
        self.assertAlmostEqual(wake.switches_on("lo", "alltoall", 64), 0.11 * 63)  # lo's own
        self.assertAlmostEqual(wake.switches_on("cluster", "rounds", 64), 0.5)  # not measured there: lo's
        self.assertAlmostEqual(wake.cpu(64), model.WakeCost(WAKE).cpu(64))  # the cluster rows stay apart

    def test_rho_at_16_then_the_cluster_curve(self):
        # bsplib switched half as often as the bare processes on the cluster at p = 16; the bare
        # processes' switches per message rise with k there, and the model's follow them
        wake = model.WakeCost(WAKE + cluster_rows(lambda k: 0.01 * k))
        truth = {"h": 5.0, "E": 1.5, "f": 7.0, "c_spin": 3.0, "c_block": 11.0, "beta": 0.0, "wake": wake}
        runs = synthetic_runs(truth, "cluster", "udp")
        for r in runs:
            if r["sync"] == "dense" and int(r["p"]) == 16:
                r["switches_per_proc"] = str(0.5 * 0.16 * 15)
        got = model.parameters(calibration_row("cluster", "udp", 5.0, 1.5, 10.5), runs, wake)
        self.assertAlmostEqual(got["rho"][("dense", "block")], 0.5)
        self.assertAlmostEqual(model.switches(got, "dense", 1, 64, model.CORES), 0.5 * 0.64 * 63)


class AckTest(unittest.TestCase):
    """The reliable layer's acks follow from its constants: the pool and link window the
    transports ask for, the window rule's requests and the waiting receivers' probes."""

    def test_pool_and_link_window_follow_the_transports(self):
        # (network, transport, p): (pool frames, link window)
        known = {("lo", "udp", 16): (384, 12),  # 24 MiB of 65507-byte frames up to 16 processes
                 ("lo", "udp", 64): (1024, 8),  # 8 KiB frames: the default 1024
                 ("lo", "udp", 128): (512, 2),  # 512 MiB per host / 128 / 8 KiB
                 ("lo", "udp", 256): (1020, 2),  # the window floor 2 x 2 x 255
                 ("lo", "nic", 32): (256, 4),  # 64 KiB frames: 16 MiB
                 ("lo", "nic", 64): (336, 2),  # ring-sized frames of 49790 bytes
                 ("cluster", "udp", 64): (4096, 32),  # 1472-byte frames: the largest default
                 ("cluster", "nic", 64): (4096, 32)}
        for (network, transport, p), (pool, window) in known.items():
            got = model.reliable_pool(network, transport, p)
            self.assertEqual((got, model.link_window(got, p)), (pool, window), (network, transport, p))

    def test_barrier_links_with_traffic_back(self):
        self.assertEqual(model.one_way_rounds(16), 3)  # round 3: i + 8 sends back to i
        self.assertEqual(model.one_way_rounds(6), 1)  # 2 + 4 = 6: rounds 1 and 2 go both ways
        self.assertEqual(model.one_way_rounds(5), 1)  # 1 + 4 = 5: rounds 0 and 2 go both ways
        self.assertEqual(model.one_way_rounds(256), 7)

    def test_window_acks(self):
        # sparse: one ack per theta frames on each one-way link (theta = w here), or per
        # w/2 + 1 where theta is smaller (w = 2: every second frame)
        self.assertAlmostEqual(model.window_acks("lo", "udp", "sparse", 64), 5 / 8)
        self.assertAlmostEqual(model.window_acks("lo", "udp", "sparse", 256), 7 / 2)
        self.assertAlmostEqual(model.window_acks("cluster", "udp", "sparse", 64), 5 / 32)
        self.assertEqual(model.window_acks("lo", "tcp", "sparse", 256), 0.0)
        # dense: a quarter of the ends, where two unacknowledged frames are more than half
        # the window
        self.assertEqual(model.window_acks("lo", "udp", "dense", 64), 0.0)
        self.assertAlmostEqual(model.window_acks("lo", "nic", "dense", 64), 63 / 4)

    def test_probe_acks(self):
        self.assertEqual(model.probe_acks("dense", 64, 9000.0), 0.0)  # no wait outlasts kMaxRetry
        self.assertAlmostEqual(model.probe_acks("dense", 65, 20000.0), 64 * 0.25 / 2)
        self.assertAlmostEqual(model.probe_acks("dense", 65, 1e12), 32.0, places=3)  # at most one per link
        self.assertEqual(model.probe_acks("sparse", 256, 1e6), 0.0)

    def test_predicted_frames_and_cpu_count_the_acks(self):
        wake = model.WakeCost(WAKE)
        params = {"h": 5.0, "E": 1.5, "f": 7.0, "c_spin": 3.0, "c_block": 11.0, "beta": 0.0, "wake": wake,
                  "network": "lo", "touched": TOUCHED}
        T, frames, U, _ = model.predict(params, "udp", "sparse", "empty", 64)
        _, tcp_frames, tcp_U, _ = model.predict(params, "tcp", "sparse", "empty", 64)
        self.assertAlmostEqual(frames, 6 + 5 / 8)
        self.assertEqual(tcp_frames, 6)
        self.assertAlmostEqual(U - tcp_U, 5 / 8 * 7.0)
        # dense at 256 over udp: the window's acks and the probes' answers; each answer's
        # probe costs CPU too, but --stats counts only the answer
        T, frames, U, _ = model.predict(params, "udp", "dense", "empty", 256)
        probes = model.probe_acks("dense", 256, T)
        self.assertGreater(probes, 100)
        self.assertAlmostEqual(frames, 255 + 255 / 4 + probes, places=4)
        _, _, tcp_U, tcp_S = model.predict(params, "tcp", "dense", "empty", 256)
        acks = 255 / 4 + 2 * probes
        # ... and they arrive as more of the all-to-all's messages: its switches per message
        # for each (the switch costs c_block and switch_extra with them)
        S = model.predict(params, "udp", "dense", "empty", 256)[3]
        self.assertAlmostEqual(S, tcp_S * (255 + acks) / 255, places=4)
        extra_switches = (S * 11.0 + model.switch_extra(params, "dense", 256, S)
                          - tcp_S * 11.0 - model.switch_extra(params, "dense", 256, tcp_S))
        self.assertAlmostEqual(U - tcp_U, acks * 7.0 + extra_switches, places=3)
        # the sparse protocol's waits are its rounds': the acks add no switch there
        self.assertEqual(model.predict(params, "udp", "sparse", "empty", 64)[3],
                         model.predict(params, "tcp", "sparse", "empty", 64)[3])


class CppConstantsTest(unittest.TestCase):
    """Every constant the model mirrors (FROM_CPP) still has its value in the C++ file it
    names (the files are the test's data: nothing else of the machine is read)."""

    @staticmethod
    def evaluate(expression):
        expression = expression.strip()
        units = {"ms": 1000000, "us": 1000, "ns": 1}
        for suffix, factor in units.items():
            if expression.endswith(suffix) and expression[:-len(suffix)].strip().isdigit():
                return int(expression[:-len(suffix)]) * factor
        expression = re.sub(r"(?<=[0-9a-fA-F])[uU][lL]*\b", "", expression)
        if not re.fullmatch(r"[0-9a-fA-Fx\s<*+()-]+", expression):
            raise ValueError("not a plain integer expression: " + expression)
        return eval(expression, {"__builtins__": {}})

    def test_values_match_the_cpp_files(self):
        root = os.path.dirname(HERE)
        for name, (value, path, constant) in model.FROM_CPP.items():
            with open(os.path.join(root, path)) as f:
                text = f.read()
            found = re.findall(r"constexpr[^=;{]*\b%s\s*(?:=\s*([^;]+?)|\{([^}]*)\})\s*;" % constant, text)
            self.assertEqual(len(found), 1, "%s: %s defined %d times in %s" % (name, constant, len(found), path))
            expression = found[0][0] or found[0][1]
            self.assertEqual(self.evaluate(expression), value,
                             "%s mirrors %s in %s, now %s" % (name, constant, path, expression))


class ReportTest(unittest.TestCase):
    def test_report_on_a_sweep_the_model_made(self):
        wake = model.WakeCost(WAKE)
        truth = {"h": 5.0, "E": 1.5, "f": 7.0, "c_spin": 3.0, "c_block": 11.0, "beta": 0.0, "wake": wake}
        with tempfile.TemporaryDirectory() as out:
            def write(name, rows):
                with open(os.path.join(out, name), "w", newline="") as f:
                    writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
                    writer.writeheader()
                    writer.writerows(rows)
            write("calibration.csv", [calibration_row("lo", "tcp", 5.0, 1.5, 10.5),
                                      # an older calibration, without CPU columns or runs
                                      dict(calibration_row("cluster", "udp", 6.0, 1.0, 9.0),
                                           p2_onecore_empty_cpu_us="")])
            write("calibration_runs.csv", synthetic_runs(truth, "lo", "tcp"))
            write("wake_cost.csv", WAKE)
            params = dict(truth, network="lo", touched=TOUCHED)
            rows = []
            for p in (2, 4, 8, 16, 32, 64, 128, 256):
                for sync in model.SYNCS:
                    for kind in model.KINDS:
                        T, frames, U, _ = model.predict(params, "tcp", sync, kind, p)
                        rows.append({"network": "lo", "sync": sync, "transport": "tcp", "p": str(p), "kind": kind,
                                     "mean_us": str(T), "median_us": str(T), "frames_per_proc": str(frames),
                                     "cpu_us_per_proc": str(U)})
            write("sync_scaling.csv", rows)
            saved = sys.argv
            sys.argv = ["sync_model.py", "report", "--out=" + out, "--no-plots"]
            try:
                model.main()
            finally:
                sys.argv = saved
            with open(os.path.join(out, "comparison.csv")) as f:
                compared = list(csv.DictReader(f))
            self.assertEqual(len(compared), len(rows))
            for r in compared:
                self.assertLessEqual(abs(float(r["error_pct"])), 1, r)
            with open(os.path.join(out, "sync_scaling.md")) as f:
                self.assertIn("lo: time within 30% of the model at 32 of 32 points", f.read())
            with open(os.path.join(out, "model.csv")) as f:
                curves = list(csv.DictReader(f))
            self.assertEqual(max(int(r["p"]) for r in curves), 10000)
            self.assertEqual({r["network"] for r in curves}, {"lo", "cluster"})


if __name__ == "__main__":
    unittest.main()
