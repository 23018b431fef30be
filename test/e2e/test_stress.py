"""Many threads marking at full speed (tx_stress: THREADS x EVENTS marks),
with no storage limit and with a small --storage-limit, checking that every
mark the program emitted is accounted for exactly: recorded + lost.

"Emitted" means the program's prof_mark calls while recording. The lost
count covers only such events: bookkeeping records the agent writes (string
definitions, thread names, the process record) are not counted when they
cannot be written (raw_writer_emit_aux), so emitted = recorded + lost holds
to the record. Recorded marks are counted in the raw streams themselves
(exact, and much faster than loading a 6.4M-event trace_view.json)."""
import glob
import json
import os
import subprocess
import unittest

from proftest import PROF, RAW_HEADER_SIZE, ProfTestCase, raw_records, workload

THREADS, EVENTS = 64, 100000
EMITTED = THREADS * EVENTS
CHUNK_KB, LIMIT_MB = 64, 8

REC_MARK = 2


def thread_streams(run_dir):
    return glob.glob(os.path.join(run_dir, "raw", "*", "t*.raw"))


def count_marks(run_dir):
    """MARK records in every thread stream, read from the raw files."""
    return raw_records(thread_streams(run_dir), REC_MARK)


class Stress(ProfTestCase):
    def stress(self, *options, env=None):
        r = self.prof_run([workload("tx_stress"), str(THREADS), str(EVENTS)], "--no-parse",
                          "--sampling-interval", "0", *options, env=env)
        self.assertEqual(r.rc, 0, r.stderr)
        self.assertEqual(r.stdout, "")
        return r, r.json("profiler_info.json")["end_info"]

    def test_no_limit_records_everything(self):
        r, end = self.stress()
        self.assertEqual(end["lost"], 0)
        self.assertIs(end["storage_limit_reached"], False)
        self.assertEqual(count_marks(r.run_dir), EMITTED)
        self.assertNotIn("storage limit", r.stderr)
        p = subprocess.run([PROF, "parse", "-q", r.run_dir], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = subprocess.run([PROF, "stats", r.run_dir], capture_output=True, text=True,
                           timeout=120)
        self.assertIn("Lost records: none", p.stdout, p.stderr)

    def test_storage_limit_said_as_it_is_reached(self):
        # a job that goes on after the limit hears it then, not at its end
        r = self.prof_run(["sh", "-c", "%s %d %d; sleep 1" % (workload("tx_stress"), THREADS,
                                                               EVENTS)],
                          "--no-parse", "--sampling-interval", "0", "--storage-limit",
                          str(LIMIT_MB), env={"PROF_AGENT_CHUNK_KB": str(CHUNK_KB)})
        self.assertEqual(r.rc, 0, r.stderr)
        live = "prof: storage limit of %d MB reached: recording stops here (what follows " \
               "is counted as lost); sh runs on" % LIMIT_MB
        self.assertEqual(r.stderr.count(live), 1, r.stderr)
        self.assertLess(r.stderr.index(live), r.stderr.index("prof: raw data in"))

    def test_storage_limit_accounts_for_every_mark(self):
        r, end = self.stress("--storage-limit", str(LIMIT_MB),
                             env={"PROF_AGENT_CHUNK_KB": str(CHUNK_KB)})
        recorded = count_marks(r.run_dir)
        lost = end["lost"]
        print("\nstress: emitted %d, recorded %d, lost %d" % (EMITTED, recorded, lost))
        self.assertEqual(recorded + lost, EMITTED)
        self.assertGreater(lost, 0)
        self.assertGreater(recorded, 0)
        self.assertIs(end["storage_limit_reached"], True)
        # The chunks written stay within the budget: stopping never rewrites.
        chunk_bytes = sum(os.path.getsize(p) - RAW_HEADER_SIZE for p in thread_streams(r.run_dir))
        self.assertLessEqual(chunk_bytes, LIMIT_MB << 20)
        self.assertGreater(chunk_bytes, (LIMIT_MB << 20) - THREADS * (CHUNK_KB << 10))
        # Said plainly: the run's last line, then the parse's summary.
        last = r.stderr.strip().splitlines()[-1]
        self.assertIn("storage limit of %d MB reached" % LIMIT_MB, last)
        self.assertIn("%d records lost" % lost, last)
        p = subprocess.run([PROF, "parse", r.run_dir], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("%d records lost while recording" % lost, p.stdout)
        self.assertIn("storage limit of %d MB reached" % LIMIT_MB, p.stdout)
        # ... and prof stats, in each of its formats
        p = subprocess.run([PROF, "stats", r.run_dir], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Lost records: %d (storage limit reached)" % lost, p.stdout)
        p = subprocess.run([PROF, "stats", "--format", "json", r.run_dir],
                           capture_output=True, text=True, timeout=120)
        ov = json.loads(p.stdout)["overview"]
        self.assertEqual((ov["lost_records"], ov["storage_limit_reached"]), (lost, True))
        p = subprocess.run([PROF, "stats", "--format", "csv", r.run_dir],
                           capture_output=True, text=True, timeout=120)
        self.assertIn("Lost records,%d," % lost, p.stdout.splitlines())


if __name__ == "__main__":
    unittest.main()
