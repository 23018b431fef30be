"""profile_memory (issue 20 §1): torch's allocator events in
memory_record.csv ("PTA" rows), operator_memory.csv, the trace's
"[memory]" events and "Framework Memory" counter, and prof stats' memory
view; a known answer: a 16 MiB tensor allocated and freed inside a named
submodule each step."""
import csv
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proftest import PROF, PYTHON, ProfTestCase  # noqa: E402

STEPS = 4
MIB16 = 16 << 20
SCRIPT = """
import sys
import torch
from torch import nn
torch.manual_seed(0)

class Scratch(nn.Module):
    def forward(self, x):
        buf = torch.empty(4 << 20, dtype=torch.float32)   # 16 MiB, freed on return
        buf.fill_(1.0)
        return x * buf[:x.shape[-1]].sum()

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(32, 32)
        self.scratch = Scratch()

    def forward(self, x):
        for _ in range(FILLER):   # small operators: a trace that --timeline-limit 1 cuts
            x = x + 0
        return self.scratch(self.lin(x))

FILLER = int(sys.argv[1]) if len(sys.argv) > 1 else 0
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for _ in range(%d):
    opt.zero_grad()
    net(torch.randn(8, 32)).sum().backward()
    opt.step()
""" % STEPS


def table(run_dir, name):
    out = os.path.join(run_dir, "PROFILER_OUTPUT", name)
    with open(out, newline="") as f:
        return list(csv.DictReader(f))


def big(rows):
    """operator_memory.csv's rows of the 16 MiB tensor."""
    return [r for r in rows if r["Size(KB)"] == "16384.000"]


class ProfileMemory(ProfTestCase):
    @classmethod
    def setUpClass(cls):
        try:
            import torch  # noqa: F401
        except ImportError:
            raise unittest.SkipTest("no torch")

    def test_known_allocation(self):
        run = self.prof_run([PYTHON, "-c", SCRIPT, "300"], "--profile-memory")
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertNotIn("note:", run.stderr)   # the key acts: no "later release" note
        ops = table(run.run_dir, "operator_memory.csv")
        rows = big(ops)
        self.assertEqual(len(rows), STEPS, ops)
        for r in rows:
            self.assertEqual(r["Name"], "aten::empty")        # the operator that allocated
            self.assertEqual(r["Device Type"], "CPU")
            self.assertTrue(r["Release Time(us)"], r)          # released in its step
            self.assertGreater(float(r["Duration(us)"]), 0)
            self.assertAlmostEqual(float(r["Release Time(us)"]) - float(r["Allocation Time(us)"]),
                                   float(r["Duration(us)"]), delta=0.002)
            self.assertGreaterEqual(float(r["Allocation Total Allocated(MB)"]), 16.0)
            self.assertLess(float(r["Release Total Allocated(MB)"]), 16.0)
        rec = [r for r in table(run.run_dir, "memory_record.csv") if r["Component"] == "PTA"]
        self.assertTrue(rec)
        totals = [float(r["Total Allocated(MB)"]) for r in rec]
        self.assertGreaterEqual(max(totals) - totals[0], 16.0)   # the peak above the baseline
        self.assertEqual({r["Device Type"] for r in rec}, {"CPU"})
        events = run.trace()["traceEvents"]
        mem = [e for e in events if e.get("name") == "[memory]"]
        self.assertEqual(sum(1 for e in mem if e["args"]["Bytes"] == MIB16), STEPS)
        self.assertEqual(sum(1 for e in mem if e["args"]["Bytes"] == -MIB16), STEPS)
        for k in ("Addr", "Bytes", "Total Allocated", "Total Reserved", "Device Type", "Device Id"):
            self.assertIn(k, mem[0]["args"])
        self.assertTrue(all(e["args"]["Addr"] for e in mem))   # torch's event tree has them
        counter = [e for e in events if e.get("ph") == "C" and e["name"] == "Framework Memory CPU"]
        self.assertEqual(len(counter), len(mem))
        self.assertGreaterEqual(max(e["args"]["Total Allocated MB"] for e in counter) -
                                counter[0]["args"]["Total Allocated MB"], 16.0)
        # prof stats: the view names the component, its peak and the operator
        out = subprocess.run([PROF, "stats", "--view", "memory", "--format", "json", run.run_dir],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        view = json.loads(out.stdout)["memory"]
        comp = {(c["component"], c["device"]): c for c in view["devices"]}
        self.assertGreaterEqual(comp[("PTA", "CPU")]["peak_mb"], 16.0)
        steps = [s for s in view["steps"] if s["component"] == "PTA"]
        self.assertEqual([s["step"] for s in steps], list(range(1, STEPS + 1)))
        self.assertTrue(all(s["peak_mb"] >= 16.0 for s in steps), steps)
        top = {o["name"]: o for o in view["operators"]}
        self.assertGreaterEqual(top["aten::empty"]["allocated_mb"], 16.0 * STEPS)
        self.assertIn("alive_at_end", view)

        # --step-list: the rows of that step only, by allocation time
        p = subprocess.run([PROF, "parse", "-q", "--step-list", "2", run.run_dir],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        kept = big(table(run.run_dir, "operator_memory.csv"))
        self.assertEqual([r["Allocation Time(us)"] for r in kept], [rows[1]["Allocation Time(us)"]])
        # --timeline-limit: the CSVs stay whole, the trace keeps the memory
        # events of the steps it keeps, as it keeps their operators
        p = subprocess.run([PROF, "parse", "-q", "--timeline-limit", "1", run.run_dir],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(big(table(run.run_dir, "operator_memory.csv"))), STEPS)
        trace = run.trace()
        kept = trace["prof_truncated"]["kept_steps"]
        self.assertTrue(0 < len(kept) < STEPS, kept)
        events = trace["traceEvents"]
        self.assertEqual(sum(1 for e in events if e.get("name") == "[memory]" and
                             e["args"]["Bytes"] == MIB16), len(kept))

    def test_off_by_default(self):
        run = self.prof_run([PYTHON, "-c", SCRIPT])
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertFalse(big(table(run.run_dir, "operator_memory.csv")))
        self.assertFalse([r for r in table(run.run_dir, "memory_record.csv")
                          if r["Component"] == "PTA"])
        events = run.trace()["traceEvents"]
        self.assertFalse([e for e in events if e.get("name") == "[memory]"])
        self.assertFalse([e for e in events if e.get("name", "").startswith("Framework Memory")])


if __name__ == "__main__":
    unittest.main()
