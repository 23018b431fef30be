"""Operator flushes written by torch itself (PROF_OPS_KINETO_SAVE, torch
2.x's _ProfilerResult.save): a program under prof run leaves Kineto's
trace JSON and prof's note in its stream directory, as the hooks do, and
prof's launcher turns them into operators while it runs (launcher/
fw_ingest.h; the parse, what is left at the end). Debian's
torch 1.13 has no save(): the program writes the file in Kineto's layout
itself, on a clock of its own, which the clock marks undo."""
import csv
import glob
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proftest import PYTHON, ProfTestCase  # noqa: E402

PROGRAM = r'''
import os, threading, time
from _prof_hooks import agent as A

OFF = 10 ** 12   # the file's clock: monotonic - OFF, as Kineto's is its own
where = A.load().fw_dir()
assert where, "the agent gave no stream directory"
tid = threading.get_native_id()
m = time.monotonic_ns()
marks = [(m + i * 2000, m + i * 2000 + 1000) for i in range(8)]
events = []

def op(cat, name, start, dur, args=""):
    s = start - OFF
    events.append('{"ph": "X", "cat": "%s", "name": "%s", "pid": %d, "tid": %d, '
                  '"ts": %d.%03d, "dur": %d.%03d, "args": {%s}}'
                  % (cat, name, os.getpid(), tid, s // 1000, s % 1000, dur // 1000, dur % 1000,
                     args))

op("user_annotation", "prof::clock_sync", m - 500, 20000)
for a, b in marks:
    op("cpu_op", "aten::empty", a + 250, 500)
for i in range(3):
    t = m + 100000 + i * 1000000
    op("cpu_op", "aten::linear", t, 400000, '"Sequence number": %d, "Fwd thread id": 0' % i)
    op("cpu_op", "aten::addmm", t + 100000, 250000,
       '"Input Dims": [[16, 64], [64, 32]], "Input type": ["float", "float"]')
with open(os.path.join(where, "kineto-1.json"), "w") as f:
    f.write('{"schemaVersion": 1, "baseTimeNanoseconds": 0, "traceEvents": [\n%s\n]}'
            % ",\n".join(events))
with open(os.path.join(where, "kineto-1.meta"), "w") as f:
    f.write("pid %d\ntid %d\nkeep_from %d\n" % (os.getpid(), tid, m + 50000)
            + "".join("mark %d %d\n" % p for p in marks))
with open(os.path.join(where, "kineto-2.json"), "w") as f:
    f.write('{"traceEvents": [')    # a save the process did not live to finish
for _ in range(50):   # prof's launcher converts flushes while the program runs
    if not os.path.exists(os.path.join(where, "kineto-1.json")):
        print("converted while running")
        break
    time.sleep(0.1)
'''


class KinetoFlush(ProfTestCase):
    def test_torch_written_flush_parsed(self):
        prog = os.path.join(self.tmp, "prog.py")
        with open(prog, "w") as f:
            f.write(PROGRAM)
        run = self.prof_run([PYTHON, prog])
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertIn("converted while running", run.stdout)   # disk kept small
        with open(run.output("op_statistic.csv"), newline="") as f:
            rows = {r["OP Type"]: r for r in csv.DictReader(f)}
        self.assertEqual(rows["aten::linear"]["Count"], "3", rows)
        self.assertEqual(rows["aten::addmm"]["Count"], "3")
        # durations kept to the nanosecond; the clock marks and their range not operators
        self.assertAlmostEqual(float(rows["aten::addmm"]["Total Time(us)"]), 750.0, places=3)
        self.assertAlmostEqual(float(rows["aten::linear"]["Total Time(us)"]), 450.0, places=3)
        self.assertNotIn("aten::empty", rows)
        self.assertNotIn("prof::clock_sync", rows)
        raw = glob.glob(run.path("raw", "*", ""))
        left = [os.path.basename(p) for d in raw for p in glob.glob(os.path.join(d, "kineto-*"))]
        self.assertEqual(left, ["kineto-2.json"])   # the unfinished one stays, and is said
        self.assertIn("1 of torch's operator flush files have no note", run.stderr)
        self.assertTrue([d for d in raw if os.path.exists(os.path.join(d, "fwk.raw"))])
        # record_shapes: torch's "Input Dims" as the operator's shapes
        with open(run.output("operator_details.csv"), newline="") as f:
            shapes = {r["Input Shapes"] for r in csv.DictReader(f) if r["Name"] == "aten::addmm"}
        self.assertEqual(shapes, {"[[16, 64], [64, 32]]"})
        # the operators sit where the program ran them: inside its process's span
        trace = run.trace()
        ops = [e for e in trace["traceEvents"] if e.get("name") == "aten::addmm"]
        self.assertEqual(len(ops), 3)
        self.assertTrue(all(abs(e["dur"] - 250.0) < 0.01 for e in ops), ops)


if __name__ == "__main__":
    unittest.main()
