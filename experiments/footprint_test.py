#!/usr/bin/env python3
"""experiments/footprint_test.py: the model's page count (sync_model.footprint) sees the pages a
real process touches. It reads /proc of a process it starts, so it depends on this machine's
kernel (clear_refs, smaps) and load: it skips where /proc does not allow it."""
import importlib.util
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("sync_model", os.path.join(HERE, "sync_model.py"))
model = importlib.util.module_from_spec(spec)
spec.loader.exec_module(model)


class FootprintTest(unittest.TestCase):
    TOUCHER = ("import sys, time\n"
               "buffer = bytearray(%d * 1024)\n"
               "end = time.monotonic() + 4\n"
               "while time.monotonic() < end:\n"
               "    for i in range(0, len(buffer), 4096):\n"
               "        buffer[i] = (buffer[i] + 1) & 255\n")

    def measure(self, kib, **window):
        command = [sys.executable, "-c", self.TOUCHER % kib]
        return model.footprint(command, 1, settle_s=0.5, name=os.path.basename(sys.executable)[:15],
                               **window)

    def test_counts_the_pages_a_process_touches(self):
        small = self.measure(1024, window_s=0.2)
        if small is None:
            self.skipTest("clear_refs or smaps not usable here")
        # The buffers' pages, give or take the heap. The window is timed by CPU, and on a
        # loaded machine the toucher may not sweep its whole buffer in it: at least a quarter,
        # so a count of nothing still fails.
        large = self.measure(8192, cpu_us=50000) or 0
        self.assertGreaterEqual(large - small, 0.25 * (8192 - 1024))
        self.assertLess(large - small, 1.2 * (8192 - 1024))


if __name__ == "__main__":
    unittest.main()
