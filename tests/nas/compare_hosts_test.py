"""tests/nas/compare_hosts_test.py: nas/compare.py leaves shm out of a job that spans hosts
(shared memory reaches one host only: every run would print FAILED) and keeps it when all
processes fit on the first host."""
import importlib.util
import os
import pathlib
import sys
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = next(p for p in [HERE.parent.parent / "nas" / "compare.py", pathlib.Path("nas/compare.py")] if p.exists())
spec = importlib.util.spec_from_file_location("compare", SOURCE)
compare = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare)


class HostsTest(unittest.TestCase):
    def hostfile(self, text):
        handle = tempfile.NamedTemporaryFile("w", suffix=".hosts", delete=False)
        handle.write(text)
        handle.close()
        self.addCleanup(os.unlink, handle.name)
        return handle.name

    def test_slots_and_hosts_used(self):
        path = self.hostfile("# cluster\nnodeA slots=2\nnodeB slots=2 iface=eth1\nnodeC\nnodeA slots=1\n")
        self.assertEqual(compare.hostfile_slots(path), 6)
        self.assertEqual(compare.hosts_used(path, 3), 1)  # nodeA has 3 slots (listed twice)
        self.assertEqual(compare.hosts_used(path, 4), 2)
        self.assertEqual(compare.hosts_used(path, 6), 3)

    def test_shm_left_out_when_the_job_spans_hosts(self):
        self.assertIsNone(compare.usable("shm", 1))
        reason = compare.usable("shm", 2)
        self.assertIsNotNone(reason)
        self.assertIn("one host", reason)
        self.assertIsNone(compare.usable("tcp", 4))
        self.assertIsNone(compare.usable("shm+tcp", 4))


if __name__ == "__main__":
    unittest.main()
