"""with_modules (nn.Module forward ranges, nested, Kineto's names and
category) and range_statistic.csv (ranges summed by name and step), with
prof stats' modules and ranges views (issue 20 §2, §4)."""
import csv
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proftest import PROF, PYTHON, SRC, ProfTestCase  # noqa: E402

SCRIPT = os.path.join(SRC, "test", "workloads", "torch_modules.py")
STEPS = 4
PATHS = {"Net_0": 1, "Net_0/Block_0": 1, "Net_0/Block_1": 1, "Net_0/Block_0/Linear_0": 1,
         "Net_0/Block_0/Linear_1": 1, "Net_0/Block_1/Linear_2": 1, "Net_0/Block_1/Linear_3": 1,
         "Net_0/Linear_4": 3}


def rows(run_dir):
    path = os.path.join(run_dir, "PROFILER_OUTPUT", "range_statistic.csv")
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class Modules(ProfTestCase):
    @classmethod
    def setUpClass(cls):
        try:
            import torch  # noqa: F401
        except ImportError:
            raise unittest.SkipTest("no torch")

    def run_script(self, *flags):
        run = self.prof_run([PYTHON, SCRIPT, str(STEPS)], *flags)
        self.assertEqual(run.rc, 0, run.stderr)
        return run

    def test_module_ranges_nest_and_sum_per_step(self):
        run = self.run_script("--with-modules")
        mods = [e for e in run.trace()["traceEvents"] if e.get("cat") == "python_function"]
        names = [e["name"] for e in mods]
        # STEPS training forwards plus the evaluation's
        for n, per in (("Net_0", 1), ("Block_0", 1), ("Linear_4", 3)):
            self.assertEqual(names.count("nn.Module: " + n), (STEPS + 1) * per, n)
        self.assertEqual(len(mods), (STEPS + 1) * 10)

        def inside(e, outer):
            return outer["ts"] <= e["ts"] and e["ts"] + e["dur"] <= outer["ts"] + outer["dur"] \
                and e["tid"] == outer["tid"]
        nets = [e for e in mods if e["name"] == "nn.Module: Net_0"]
        blocks = [e for e in mods if e["name"] == "nn.Module: Block_0"]
        for lin in (e for e in mods if e["name"] == "nn.Module: Linear_0"):
            self.assertEqual(sum(inside(lin, b) for b in blocks), 1)
        for b in blocks:
            self.assertEqual(sum(inside(b, n) for n in nets), 1)
        table = [r for r in rows(run.run_dir) if r["Category"] == "nn.Module"]
        for step in range(1, STEPS + 1):
            got = {r["Name"]: int(r["Calls"]) for r in table if r["Step Id"] == str(step)}
            self.assertEqual(got, PATHS, step)
        outside = {r["Name"]: int(r["Calls"]) for r in table if r["Step Id"] == ""}
        self.assertEqual(outside, PATHS)   # the evaluation, after the last step
        for r in table:   # self = total less the modules directly inside
            self.assertLessEqual(float(r["Self Time(us)"]), float(r["Total Time(us)"]) + 0.001)
        net = [r for r in table if r["Name"] == "Net_0" and r["Step Id"] == "2"][0]
        kids = [r for r in table if r["Step Id"] == "2" and r["Name"].count("/") == 1]
        self.assertAlmostEqual(float(net["Self Time(us)"]),
                               float(net["Total Time(us)"]) -
                               sum(float(k["Total Time(us)"]) for k in kids), delta=0.01)
        out = subprocess.run([PROF, "stats", "--view", "modules", "--where", "steps", "--format",
                              "csv", run.run_dir], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        view = {r["Module"]: r for r in csv.DictReader(out.stdout.splitlines())}
        self.assertEqual(int(view["Net_0/Linear_4"]["Calls"]), 3 * STEPS)
        self.assertEqual(int(view["Net_0/Linear_4"]["Steps"]), STEPS)

    def test_user_ranges_table_and_step_list(self):
        run = self.run_script()
        self.assertFalse(any(e.get("cat") == "python_function"
                             for e in run.trace()["traceEvents"]))
        table = rows(run.run_dir)
        self.assertFalse([r for r in table if r["Category"] == "nn.Module"])
        data = {r["Step Id"]: int(r["Calls"]) for r in table if r["Name"] == "data"}
        # step 1 begins once the optimizer is built: its two "data" ranges are in it
        self.assertEqual(data, {str(s): 2 for s in range(1, STEPS + 1)})
        self.assertEqual([(r["Step Id"], r["Calls"]) for r in table if r["Name"] == "eval"],
                         [("", "1")])
        out = subprocess.run([PROF, "stats", "--view", "ranges", "--format", "json", run.run_dir],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        view = {r["name"]: r for r in json.loads(out.stdout)["ranges"]}
        self.assertEqual((view["data"]["calls"], view["data"]["steps"]), (2 * STEPS, STEPS))
        self.assertEqual((view["eval"]["calls"], view["eval"]["steps"]), (1, 0))
        p = subprocess.run([PROF, "parse", "-q", "--step-list", "2", run.run_dir],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual({(r["Name"], r["Step Id"]) for r in rows(run.run_dir)}, {("data", "2")})


if __name__ == "__main__":
    unittest.main()
