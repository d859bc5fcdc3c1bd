#!/usr/bin/env python3
"""bench/sync_model_test.py: the superstep-cost model's calibration recovers known parameters.

Calibration runs made by the model itself from chosen f, q and (for nic) beta must give them
back from parameters(); report must read the files bench/sync_scaling.sh and calibrate
write (old calibrations without the CPU columns too) and find every point of a sweep made
by the model within 30% of it.
"""
import csv
import importlib.util
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("sync_model", os.path.join(HERE, "sync_model.py"))
model = importlib.util.module_from_spec(spec)
spec.loader.exec_module(model)

WAKE = [{"pattern": "rounds", "wait": "spin", "cpus": "2", "k": str(k), "rusage_cpu_us_per_message": str(v)}
        for k, v in ((2, 5.0), (4, 5.5), (8, 5.4), (16, 6.5), (32, 7.0), (64, 8.0), (128, 9.0), (256, 11.0))]


def calibration_row(network, transport, h, E, u1):
    return {"network": network, "transport": transport, "rtt_median_us": str(2 * h), "rtt_min_us": str(2 * h),
            "p2_empty_min_us": str(E + h), "p2_empty_median_us": str(E + h), "p2_empty_mean_us": str(E + h),
            "p2_onecore_empty_mean_us": str(2 * u1), "p2_onecore_empty_cpu_us": str(u1)}


def synthetic_runs(truth, network, transport, foreign=0):
    """The calibration subset as the model says it would be measured."""
    runs = []
    for p in model.CALIBRATION_PS:
        for sync in model.SYNCS:
            for kind in model.KINDS:
                D, _, W = model.protocol(sync, kind, p)
                params = dict(truth, network=network)
                sockets = model.fanout(network, p) + foreign
                b = min(1.0, p / model.CORES - 1)
                U = (truth["E"] + D * (truth["f"] + truth["beta"] * sockets)
                     + W * b * (truth["s2"] + params["wake"].m(p / model.CORES) + truth["q"] * (p - 2)))
                runs.append({"network": network, "transport": transport, "sync": sync, "p": str(p), "kind": kind,
                             "cpu_us_per_proc": str(U), "frames_per_proc": str(D), "mean_us": str(p / 2 * U),
                             "foreign_packet_sockets": str(foreign)})
    return runs


class CalibrationTest(unittest.TestCase):
    def check(self, transport, beta, foreign=0):
        wake = model.WakeCost(WAKE)
        h, E, f, s2, q = 5.0, 1.5, 7.0, 2.0, 0.2
        if transport == "nic":
            f = h  # the model takes nic's frame from the p = 2 hop
        truth = {"h": h, "E": E, "f": f, "s2": s2, "q": q, "beta": beta, "wake": wake}
        row = calibration_row("lo", transport, h, E, u1=E + f + s2)
        got = model.parameters(row, synthetic_runs(truth, "lo", transport, foreign), wake)
        for name in ("f", "q", "beta", "s2", "E", "h"):
            self.assertAlmostEqual(got[name], truth[name], delta=1e-6 + 1e-6 * abs(truth[name]), msg=name)

    def test_tcp_recovers_f_and_q(self):
        self.check("tcp", beta=0.0)

    def test_nic_recovers_beta_with_other_jobs_sockets(self):
        self.check("nic", beta=0.3, foreign=40)

    def test_wake_cost_is_monotone_and_zero_at_two_per_core(self):
        wake = model.WakeCost(WAKE)
        self.assertEqual(wake.m(2), 0.0)
        values = [wake.m(n) for n in (2, 4, 8, 16, 64, 128, 5000)]
        self.assertEqual(values, sorted(values))
        self.assertGreater(wake.m(128), 0.0)

    def test_protocol_counts(self):
        self.assertEqual(model.protocol("dense", "empty", 16), (15, 1, 1))
        self.assertEqual(model.protocol("sparse", "empty", 16), (4, 4, 4))
        self.assertEqual(model.protocol("sparse", "neighbour", 16), (6, 6, 5))
        self.assertEqual(model.protocol("sparse", "empty", 17), (5, 5, 5))


class ReportTest(unittest.TestCase):
    def test_report_on_a_sweep_the_model_made(self):
        wake = model.WakeCost(WAKE)
        truth = {"h": 5.0, "E": 1.5, "f": 7.0, "s2": 2.0, "q": 0.2, "beta": 0.0, "wake": wake}
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
            params = dict(truth, network="lo")
            rows = []
            for p in (2, 4, 8, 16, 32, 64, 128, 256):
                for sync in model.SYNCS:
                    for kind in model.KINDS:
                        T, frames, U = model.predict(params, "tcp", sync, kind, p)
                        rows.append({"network": "lo", "sync": sync, "transport": "tcp", "p": str(p), "kind": kind,
                                     "mean_us": str(T), "median_us": str(T), "frames_per_proc": str(frames),
                                     "cpu_us_per_proc": str(U)})
            write("sync_scaling.csv", rows)
            saved = sys.argv
            sys.argv = ["sync_model.py", "report", "--out=" + out]
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
