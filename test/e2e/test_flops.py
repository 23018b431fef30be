"""with_flops (issue 20 §3): torch's FLOPs per operator in
operator_details.csv and the trace, summed per step by prof stats' flops
view, with MFU given a peak."""
import csv
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proftest import PROF, PYTHON, ProfTestCase  # noqa: E402

SCRIPT = """
import torch
from torch import nn
torch.manual_seed(0)
lin = nn.Linear(512, 256)
opt = torch.optim.SGD(lin.parameters(), lr=0.01)
for _ in range(3):
    opt.zero_grad()
    lin(torch.randn(64, 512)).sum().backward()
    opt.step()
"""
ADDMM = 2 * 64 * 512 * 256   # torch's count for addmm of [64,512]x[512,256]


class Flops(ProfTestCase):
    @classmethod
    def setUpClass(cls):
        try:
            import torch  # noqa: F401
        except ImportError:
            raise unittest.SkipTest("no torch")

    def ops(self, run):
        with open(run.output("operator_details.csv"), newline="") as f:
            return list(csv.DictReader(f))

    def test_known_linear(self):
        run = self.prof_run([PYTHON, "-c", SCRIPT], "--with-flops")
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertIn('key "with_flops": records operators\' input shapes too', run.stderr)
        rows = self.ops(run)
        addmm = [r for r in rows if r["Name"] == "aten::addmm" and r["Step Id"]]
        self.assertEqual(len(addmm), 3)
        self.assertTrue(all(int(r["FLOPs"]) == ADDMM for r in addmm), addmm)
        self.assertTrue(all(r["Input Shapes"] for r in addmm))   # shapes came with it
        traced = [e for e in run.trace()["traceEvents"]
                  if e.get("name") == "aten::addmm" and e.get("cat") == "cpu_op"]
        self.assertTrue(traced and all(e["args"]["flops"] == ADDMM for e in traced))
        per_step = {}
        for r in rows:
            if r["FLOPs"] and r["Step Id"]:
                per_step[int(r["Step Id"])] = per_step.get(int(r["Step Id"]), 0) + int(r["FLOPs"])
        self.assertEqual(sorted(per_step), [1, 2, 3])
        self.assertTrue(all(v >= ADDMM for v in per_step.values()))
        out = subprocess.run([PROF, "stats", "--view", "flops", "--peak-tflops", "2",
                              "--format", "json", run.run_dir], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        view = json.loads(out.stdout)["flops"]
        self.assertEqual([r["step"] for r in view], [1, 2, 3])
        for r in view:
            self.assertAlmostEqual(r["gflops"], per_step[r["step"]] / 1e9, places=3)
            self.assertGreater(r["time"], 0)
            tflops = per_step[r["step"]] / (r["time"] * 1e-3) / 1e12   # time in ms
            self.assertAlmostEqual(r["tflops"], tflops, places=2)
            self.assertAlmostEqual(r["mfu"], 100 * r["tflops"] / 2, places=1)

    def test_off_by_default(self):
        run = self.prof_run([PYTHON, "-c", SCRIPT])
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertTrue(all(r["FLOPs"] == "" for r in self.ops(run)))
        out = subprocess.run([PROF, "stats", "--view", "flops", run.run_dir],
                             capture_output=True, text=True)
        self.assertIn("no operator in a step has FLOPs: record with --with-flops", out.stdout)
        bad = subprocess.run([PROF, "stats", "--view", "flops", "--peak-tflops", "0",
                              run.run_dir], capture_output=True, text=True)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("--peak-tflops: '0' is not a number above 0", bad.stderr)


if __name__ == "__main__":
    unittest.main()
