"""Nothing costs what is not recorded (issue 18 §5): a process that records
nothing leaves nothing under raw/ (a shell loop of 100 /bin/true left
100 MB before); a closed stream ends at its last record; a program that
keeps starting threads keeps prof's memory flat; naming a thread makes no
stream."""
import glob
import os
import re
import unittest

from proftest import PYTHON, ProfTestCase, events, prof_features, workload


def process_dirs(run):
    return [d for d in glob.glob(run.path("raw", "*")) if re.search(r"/\d+\.\d+$", d)]


def raw_bytes(run):
    return sum(os.path.getsize(p) for p in glob.glob(run.path("raw", "*", "*.raw")))


class Footprint(ProfTestCase):
    def test_idle_processes_leave_nothing(self):
        r = self.prof_run(["sh", "-c", "for i in $(seq 100); do /bin/true; done"],
                          "--sampling-interval", "0")
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual(process_dirs(r), [])
        self.assertTrue(os.path.exists(r.output("parse.done")), r.stderr)

    def test_naming_a_thread_makes_no_stream(self):
        script = ("import ctypes\n"
                  "libc = ctypes.CDLL(None)\n"
                  "libc.pthread_self.restype = ctypes.c_ulong\n"
                  "libc.pthread_setname_np.argtypes = [ctypes.c_ulong, ctypes.c_char_p]\n"
                  "assert libc.pthread_setname_np(libc.pthread_self(), b'renamed') == 0\n")
        r = self.prof_run([PYTHON, "-c", script], "--sampling-interval", "0")
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual(process_dirs(r), [])

    def test_closed_stream_ends_at_its_last_record(self):
        # tx_steps marks and steps a little: its stream is cut to what it
        # holds, far below the 1 MB chunk every stream began with
        r = self.prof_run([workload("tx_steps"), "3", "2"], "--sampling-interval", "0")
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertParsedClean(r)
        streams = glob.glob(r.path("raw", "*", "t*.raw"))
        self.assertTrue(streams)
        for p in streams:
            self.assertLess(os.path.getsize(p), 64 << 10, p)
        self.assertEqual(len(events(r.trace(), ph="X", name="ProfilerStep#3")), 1)

    def test_killed_stream_holds_its_first_step_only(self):
        # no close, no cut: the chunk's blocks were taken 64 KB at a time
        script = ("import ctypes, os, signal\n"
                  "tx = ctypes.CDLL(None)\n"
                  "for i in range(100): tx.prof_mark(b'before the kill')\n"
                  "os.kill(os.getpid(), signal.SIGKILL)\n")
        r = self.prof_run([PYTHON, "-c", script], "--sampling-interval", "0")
        streams = glob.glob(r.path("raw", "*", "t*.raw"))
        self.assertEqual(len(streams), 1, r.stderr)
        self.assertLessEqual(os.path.getsize(streams[0]), 4096 + (64 << 10))
        marks = [e for e in events(r.trace(), ph="i") if e["name"] == "before the kill"]
        self.assertEqual(len(marks), 100)

    def test_storage_limit_counts_what_is_taken(self):
        # 10 processes that mark once fit in 1 MB: each takes 64 KB of it,
        # not a whole 1 MB chunk (only the first fitted before)
        r = self.prof_run(["sh", "-c", "for i in 0 1 2 3 4 5 6 7 8 9; do %s 1 1; done"
                           % workload("tx_steps")], "--sampling-interval", "0",
                          "--storage-limit", "1")
        self.assertEqual(r.rc, 0, r.stderr)
        end = r.json("profiler_info.json")["end_info"]
        self.assertEqual(end["lost"], 0, r.stderr)
        self.assertIs(end["storage_limit_reached"], False)
        self.assertEqual(len(process_dirs(r)), 10)

    def test_many_short_threads_keep_memory_flat(self):
        n = 5000
        r = self.prof_run([workload("tx_many_threads"), str(n)], "--sampling-interval", "0",
                          timeout=300)
        self.assertEqual(r.rc, 0, r.stderr)
        m = re.match(r"rss_kb (\d+) (\d+) maps (\d+) (\d+)$", r.stdout.strip())
        self.assertTrue(m, r.stdout)
        rss_a, rss_b, maps_a, maps_b = (int(x) for x in m.groups())
        print("\nthreads: rss %d -> %d kB, maps %d -> %d, raw %d kB" %
              (rss_a, rss_b, maps_a, maps_b, raw_bytes(r) >> 10))
        # the last 90% of the threads cost no memory and no mappings
        # (each kept its structure, 1 MB chunk and arenas before: +65 MB);
        # a sanitizer's runtime keeps memory of its own per thread
        if not prof_features() & {"asan", "tsan"}:
            self.assertLess(rss_b - rss_a, 2048)
            self.assertLess(maps_b - maps_a, 16)
        # each thread's stream is a header and its few records
        self.assertLess(raw_bytes(r), n * (16 << 10))
        self.assertParsedClean(r)
        names = [e["name"] for e in events(r.trace(), ph="i") if e["name"].startswith("thread ")]
        self.assertEqual(len(names), n)


if __name__ == "__main__":
    unittest.main()
