"""prof diff BASE NEW: two runs compared, and --fail-above as a CI gate.
tx_steps STEPS MS sleeps MS ms a step inside a range "work", so two runs
that differ only in MS differ by a known step time. The shipped example
(share/prof/examples/train.py) at two model sizes, where torch is there."""
import csv
import glob
import io
import json
import os
import shutil
import subprocess
import unittest

from proftest import PROF, PYTHON, SRC, ProfTestCase, workload

EXAMPLE = os.path.join(SRC, "share", "prof", "examples", "train.py")


def diff(*args):
    return subprocess.run([PROF, "diff", *args], capture_output=True, text=True, timeout=120)


def has_torch():
    return subprocess.run([PYTHON, "-c", "import torch"], capture_output=True,
                          timeout=120).returncode == 0


def words(text):
    """Text with its line wrapping undone (tables wrap at 80 columns)."""
    return " ".join(text.split())


class Diff(ProfTestCase):
    def run_steps(self, ms, *options, name="out"):
        r = self.prof_run([workload("tx_steps"), "4", str(ms)], *options,
                          out=os.path.join(self.tmp, name))
        self.assertEqual(r.rc, 0, r.stderr)
        return r

    def test_run_with_itself(self):
        run = self.run_steps(5)
        p = diff("--fail-above", "0", run.run_dir, run.run_dir)
        self.assertEqual(p.returncode, 0, p.stderr + p.stdout)
        self.assertNotIn("Not comparable", p.stdout)
        self.assertIn("about as fast as BASE", p.stdout.splitlines()[-1])
        j = json.loads(diff("--format", "json", run.run_dir, run.run_dir).stdout)
        self.assertTrue(j["comparable"])
        for row in j["step_time"]:
            self.assertEqual(row["change"], 0, row)
            self.assertEqual(row["change_pct"], 0, row)
        for row in j["ranges"]:
            self.assertEqual(row["status"], "both")
            self.assertEqual(row["change_pct"], 0, row)
        self.assertEqual(j["verdict"]["median_change_pct"], 0)
        self.assertEqual(j["verdict"]["exit_status"], 0)

    def test_slower_run_fails_the_gate(self):
        fast, slow = self.run_steps(5, name="fast"), self.run_steps(25, name="slow")
        p = diff("--fail-above", "5", fast.run_dir, slow.run_dir)
        self.assertEqual(p.returncode, 1, p.stderr + p.stdout)
        last = p.stdout.strip().splitlines()[-1]
        self.assertTrue(last.startswith("Verdict: NEW is "), last)
        self.assertIn("slower than BASE", last)
        self.assertIn("above the 5% limit: FAIL", last)
        # the other way round NEW is faster: the gate passes
        p = diff("--fail-above", "5", slow.run_dir, fast.run_dir)
        self.assertEqual(p.returncode, 0, p.stderr + p.stdout)
        self.assertIn("faster than BASE", p.stdout)
        self.assertIn("PASS", p.stdout)
        # the same program with another argument: said, not held against the runs
        self.assertIn("Note: the same program with other arguments: BASE `25`, NEW `5`",
                      words(p.stdout))
        self.assertNotIn("Not comparable", p.stdout)
        self.assertNotIn("may not be comparable", p.stdout)
        # JSON parsed back: the slower range and the median match the CSVs
        p = diff("--format", "json", "--fail-above", "5", fast.run_dir, slow.run_dir)
        self.assertEqual(p.returncode, 1, p.stderr)
        j = json.loads(p.stdout)
        self.assertTrue(j["comparable"])
        self.assertEqual(j["arguments_differ"], {"base": "5", "new": "25"})
        self.assertGreater(j["verdict"]["median_change_pct"], 100)
        self.assertTrue(j["verdict"]["failed"])
        self.assertIn("FAIL", p.stderr)
        work = next(r for r in j["ranges"] if r["name"] == "work")
        self.assertEqual((work["calls_base"], work["calls_new"]), (4, 4))
        total = {}
        for name, run in (("base", fast), ("new", slow)):
            rows = [r for r in run.csv_rows("range_statistic.csv")[1:] if r[1] == "work"]
            total[name] = sum(float(r[4]) for r in rows) / 1000
        self.assertAlmostEqual(work["total_base"], total["base"], places=2)
        self.assertAlmostEqual(work["total_new"], total["new"], places=2)
        self.assertGreater(work["change_pct"], 100)
        # CSV: one long table
        p = diff("--format", "csv", fast.run_dir, slow.run_dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = list(csv.DictReader(io.StringIO(p.stdout)))
        med = next(r for r in rows if r["Name"] == "Median step")
        self.assertGreater(float(med["Change(%)"]), 100)

    def test_archive_against_directory(self):
        base = self.run_steps(5, "--archive", "tar.gz", name="base")
        tarball = base.run_dir + ".tar.gz"
        self.assertTrue(os.path.exists(tarball), base.stderr)
        shutil.rmtree(base.run_dir)
        new = self.run_steps(5, name="new")
        p = diff("--fail-above", "50", tarball, new.run_dir)
        self.assertEqual(p.returncode, 0, p.stderr + p.stdout)
        self.assertIn("BASE: " + tarball, p.stdout)
        self.assertIn("4 steps", p.stdout)
        self.assertNotIn("Not comparable", p.stdout)
        # the archive was extracted into a temporary directory, not beside it
        self.assertEqual(sorted(os.listdir(os.path.dirname(tarball))),
                         [os.path.basename(tarball)])

    def test_unparsed_run_is_parsed_first(self):
        run = self.run_steps(5)
        shutil.rmtree(run.path("PROFILER_OUTPUT"))
        p = diff(run.run_dir, run.run_dir)
        self.assertEqual(p.returncode, 0, p.stderr + p.stdout)
        self.assertIn("was not parsed; parsing it first", p.stderr)
        self.assertTrue(os.path.exists(run.output("parse.done")))

    def test_names_that_appear_and_vanish(self):
        sim = self.prof_run([workload("sim_work"), "3"], out=os.path.join(self.tmp, "sim"))
        self.assertEqual(sim.rc, 0, sim.stderr)
        host = self.run_steps(5, name="host")
        p = diff("--format", "json", "--top", "0", sim.run_dir, host.run_dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        j = json.loads(p.stdout)
        self.assertFalse(j["comparable"])
        self.assertTrue(any("devices differ" in n for n in j["notes"]), j["notes"])
        self.assertTrue(any(n.startswith("the programs differ: BASE ran `%s 3`"
                                         % workload("sim_work")) for n in j["notes"]), j["notes"])
        self.assertIsNone(j["arguments_differ"])
        kernels = {r["name"]: r for r in j["kernels"]}
        self.assertEqual(kernels["sim_gemm"]["status"], "gone")
        self.assertEqual(kernels["sim_gemm"]["calls_base"], 3)
        ranges = {r["name"]: r for r in j["ranges"]}
        self.assertEqual(ranges["work"]["status"], "new")
        self.assertIsNone(ranges["work"]["change_pct"])
        # ordered by the size of the change
        changes = [abs(r["change"]) for r in j["kernels"]]
        self.assertEqual(changes, sorted(changes, reverse=True))
        self.assertEqual(j["peak_memory_mb"]["base"], 1.0)
        p = diff("--top", "2", sim.run_dir, host.run_dir)
        self.assertIn("sim_gemm", p.stdout)
        self.assertNotIn("sim_relu", p.stdout)     # the 4th largest change, past --top
        self.assertIn("gone", p.stdout)

    @unittest.skipUnless(has_torch(), "needs torch")
    def test_example_at_two_model_sizes(self):
        """The shipped example, a hidden layer of 64 and of 512: the larger
        model's steps are many times slower (its matrix products grow with
        the square of the width), which the gate must catch."""
        runs = {}
        for hidden in (64, 512):
            r = self.prof_run([PYTHON, EXAMPLE, "--steps", "10", "--hidden", str(hidden)],
                              out=os.path.join(self.tmp, "h%d" % hidden), timeout=300)
            self.assertEqual(r.rc, 0, r.stderr)
            runs[hidden] = r
        small, big = runs[64].run_dir, runs[512].run_dir
        p = diff("--fail-above", "5", small, big)
        self.assertEqual(p.returncode, 1, p.stderr + p.stdout)
        last = p.stdout.strip().splitlines()[-1]
        self.assertTrue(last.startswith("Verdict: NEW is "), last)
        self.assertIn("slower than BASE", last)
        self.assertIn("above the 5% limit: FAIL", last)
        self.assertNotIn("may not be comparable", last)
        self.assertIn("Note: the same program with other arguments: BASE `--hidden 64`, "
                      "NEW `--hidden 512`", words(p.stdout))
        self.assertNotIn("Not comparable", p.stdout)
        # reversed, NEW is the small model: the gate passes
        p = diff("--fail-above", "5", big, small)
        self.assertEqual(p.returncode, 0, p.stderr + p.stdout)
        last = p.stdout.strip().splitlines()[-1]
        self.assertIn("faster than BASE", last)
        self.assertIn("within the 5% limit: PASS", last)
        # JSON parsed back: the matrix products grew, and the numbers are the CSVs'
        p = diff("--format", "json", "--top", "0", "--fail-above", "5", small, big)
        self.assertEqual(p.returncode, 1, p.stderr)
        j = json.loads(p.stdout)
        self.assertTrue(j["comparable"], j["notes"])
        self.assertEqual(j["arguments_differ"], {"base": "--hidden 64", "new": "--hidden 512"})
        self.assertTrue(j["verdict"]["failed"])
        self.assertGreater(j["verdict"]["median_change_pct"], 200)
        self.assertEqual((j["base"]["steps"], j["new"]["steps"]), (10, 10))
        ops = {r["name"]: r for r in j["operators"]}
        for name in ("aten::mm", "aten::addmm"):
            op = ops[name]
            self.assertEqual(op["status"], "both")
            self.assertGreater(op["total_new"], 3 * op["total_base"], op)
            for side, hidden in (("base", 64), ("new", 512)):
                rows = [r for r in runs[hidden].csv_rows("operator_details.csv")[1:]
                        if r[0] == name]
                self.assertEqual(op["calls_" + side], len(rows))
                self.assertAlmostEqual(op["total_" + side],
                                       sum(float(r[4]) for r in rows) / 1000, places=2)
                self.assertAlmostEqual(op["self_" + side],
                                       sum(float(r[3]) for r in rows) / 1000, places=2)
        # the median step is step_trace_time.csv's
        med = next(r for r in j["step_time"] if r["name"] == "median")
        for side, hidden in (("base", 64), ("new", 512)):
            rows = runs[hidden].csv_rows("step_trace_time.csv")
            head = rows[0]
            self.assertEqual(len(rows) - 1, 10)
            times = sorted(sum(float(r[head.index(c)]) for c in ("Preparing", "Stage", "Bubble"))
                           for r in rows[1:])
            self.assertAlmostEqual(med[side], (times[4] + times[5]) / 2 / 1000, places=2)

    def test_no_steps(self):
        run = self.run_steps(5)
        with open(run.output("step_trace_time.csv")) as f:
            header = f.readline()
        with open(run.output("step_trace_time.csv"), "w") as f:
            f.write(header)
        p = diff(run.run_dir, run.run_dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("has no steps", p.stdout)
        p = diff("--fail-above", "5", run.run_dir, run.run_dir)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("no verdict", p.stdout.strip().splitlines()[-1])

    def test_a_directory_of_runs_one_after_another(self):
        # ./prof_data after two runs: not a cluster to compare as a whole
        first = self.run_steps(5, name="data")
        second = self.run_steps(5, name="data")
        holder = os.path.dirname(first.run_dir)
        p = diff(holder, second.run_dir)
        self.assertEqual(p.returncode, 4, p.stderr + p.stdout)
        self.assertIn("prof diff: %s holds 2 runs; name one (oldest first):\n  %s\n  %s   "
                      "(the newest)" % (holder, first.run_dir, second.run_dir), p.stderr)
        self.assertIn("not the ranks of one job", p.stderr)
        self.assertEqual(diff(first.run_dir, second.run_dir).returncode, 0)

    def test_findings_compared(self):
        base = self.run_steps(5)
        new = os.path.join(self.tmp, "new_prof")
        shutil.copytree(base.run_dir, new)
        finding = {"rule": "data_loading", "value": 30.0, "threshold": 10, "unit": "%",
                   "text": "Data loading takes 30.0% of the step time",
                   "advice": "more DataLoader workers"}
        with open(os.path.join(new, "PROFILER_OUTPUT", "findings.json"), "w") as f:
            json.dump([finding], f)
        p = diff(base.run_dir, new)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Findings (report.html): BASE 0, NEW 1\n"
                      "  new in NEW  Data loading takes 30.0% of the step time\n", p.stdout)
        p = diff(new, base.run_dir)
        self.assertIn("Findings (report.html): BASE 1, NEW 0\n"
                      "  gone        Data loading takes 30.0% of the step time\n", p.stdout)
        p = diff(new, new)
        self.assertIn("  in both     Data loading takes 30.0% of the step time", p.stdout)
        j = json.loads(diff("--format", "json", base.run_dir, new).stdout)
        self.assertEqual(j["findings"], {"base": [], "new": ["data_loading"]})
        os.remove(base.output("findings.json"))   # --no-report, an older prof
        p = diff(base.run_dir, new)
        self.assertIn("Findings: not compared: BASE has no findings.json", p.stdout)
        j = json.loads(diff("--format", "json", base.run_dir, new).stdout)
        self.assertEqual(j["findings"], {"base": None, "new": ["data_loading"]})

    def test_damaged_input(self):
        run = self.run_steps(5)
        bad = os.path.join(self.tmp, "bad.tar.gz")
        with open(bad, "wb") as f:
            f.write(b"\x1f\x8b not really gzip")
        p = diff(bad, run.run_dir)
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn("bad.tar.gz", p.stderr)
        # a damaged CSV: named
        with open(run.output("step_trace_time.csv"), "a") as f:
            f.write("-1,9,zz,0,0,0,0,0,0,0,0\n")
        p = diff(run.run_dir, run.run_dir)
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn("step_trace_time.csv", p.stderr)
        p = diff(os.path.join(self.tmp, "missing"), run.run_dir)
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn("missing", p.stderr)

    def test_usage(self):
        for args in ([], ["one"], ["a", "b", "c"], ["--fail-above", "x", "a", "b"],
                     ["--format", "xml", "a", "b"], ["--top", "-1", "a", "b"], ["--bogus"]):
            p = diff(*args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertTrue(p.stderr.startswith("prof diff: "), p.stderr)
        # one wording in every command for a bad option
        for cmd in ("diff", "stats", "parse", "run"):
            p = subprocess.run([PROF, cmd, "--bogus", "x"], capture_output=True, text=True)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(p.stderr.splitlines()[0], "prof %s: unknown option '--bogus'; "
                             "see 'prof %s --help'" % (cmd, cmd))
        for cmd, opt in (("diff", "--top"), ("stats", "--top"), ("parse", "--archive"),
                         ("run", "--delay")):
            p = subprocess.run([PROF, cmd, opt], capture_output=True, text=True)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(p.stderr.splitlines()[0], "prof %s: option '%s' needs a value; "
                             "see 'prof %s --help'" % (cmd, opt, cmd))
        p = diff("--help")
        self.assertEqual(p.returncode, 0)
        self.assertIn("--fail-above", p.stdout)
        p = subprocess.run([PROF, "--help"], capture_output=True, text=True)
        self.assertIn("diff", p.stdout)


if __name__ == "__main__":
    unittest.main()
