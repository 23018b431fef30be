"""prof parse's options (--export-type, --step-list, --timeline-limit,
--data-simplification, --pretty, --gzip, --quiet) and the same keys in
prof run's PROF_OPTIONS."""
import csv
import fcntl
import gzip
import json
import os
import sqlite3
import subprocess
import time
import unittest

from proftest import PROF, ProfTestCase, workload


class ParseOptionsTest(ProfTestCase):
    def record(self, *cmd, env=None):
        run = self.prof_run(list(cmd) or [workload("tx_steps"), "6", "1"], env=env)
        self.assertEqual(run.rc, 0, run.stderr)
        return run

    def parse(self, run, *options):
        return subprocess.run([PROF, "parse", *options, run.run_dir],
                              capture_output=True, text=True, timeout=120)

    def test_db(self):
        run = self.record(workload("sim_overlap"))
        p = self.parse(run, "--export-type", "text,db")
        self.assertEqual(p.returncode, 0, p.stderr)
        db = sqlite3.connect(run.output("profiler.db"))
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        self.assertIn("timeline", tables)
        for name in os.listdir(run.path("PROFILER_OUTPUT")):
            if name.endswith(".csv"):
                rows = run.csv_rows(name)
                t = name[:-4]
                self.assertIn(t, tables)
                self.assertEqual(db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0],
                                 len(rows) - 1, name)
                cols = [r[1] for r in db.execute(f'PRAGMA table_info("{t}")')]
                self.assertEqual(cols, rows[0])
        steps = run.csv_rows("step_trace_time.csv")
        types = {r[1]: r[2] for r in db.execute('PRAGMA table_info("step_trace_time")')}
        self.assertEqual(types["Step"], "INTEGER")
        self.assertEqual(types["Free"], "REAL")
        got = db.execute('SELECT Step, Free FROM step_trace_time ORDER BY rowid LIMIT 1').fetchone()
        self.assertEqual(got, (int(steps[1][1]), float(steps[1][6])))
        events = run.trace()["traceEvents"]
        self.assertEqual(db.execute("SELECT count(*) FROM timeline").fetchone()[0], len(events))
        x = [e for e in events if e["ph"] == "X"][0]
        row = db.execute("SELECT pid, tid, ts_us, dur_us, cat, args FROM timeline "
                         "WHERE ph='X' AND name=? ORDER BY rowid LIMIT 1", (x["name"],)).fetchone()
        self.assertEqual(row[:4], (x["pid"], x["tid"], x["ts"], x["dur"]))
        # db only: the CSVs and trace_view.json go, the db stays
        p = self.parse(run, "--export-type", "db")
        self.assertEqual(p.returncode, 0, p.stderr)
        left = os.listdir(run.path("PROFILER_OUTPUT"))
        self.assertIn("profiler.db", left)
        self.assertFalse([n for n in left if n.endswith(".csv") or n == "trace_view.json"])

    def test_step_list(self):
        run = self.record()
        p = self.parse(run, "--step-list", "3,4")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(" 2 steps,", p.stdout)   # the summary counts the steps it kept
        steps = [r[1] for r in run.csv_rows("step_trace_time.csv")[1:]]
        self.assertEqual(sorted(set(steps)), ["3", "4"])
        names = {e["name"] for e in run.trace()["traceEvents"] if e["ph"] == "X"}
        self.assertIn("ProfilerStep#3", names)
        self.assertIn("ProfilerStep#4", names)
        self.assertNotIn("ProfilerStep#1", names)
        self.assertNotIn("ProfilerStep#6", names)
        self.assertTrue([e for e in run.trace()["traceEvents"] if e["ph"] == "M"])

    def test_step_list_sums(self):
        """The sums and the communication files hold only the steps asked
        for: sim_work does the same work every step (test/workloads/sim_work.c),
        plus stream setup and teardown outside any step."""
        run = self.record(workload("sim_work"), "6")
        def counts(name, key, count):
            rows = run.csv_rows(name)
            k, c = rows[0].index(key), rows[0].index(count)
            return {r[k]: int(r[c]) for r in rows[1:]}
        whole_ops = counts("op_statistic.csv", "OP Type", "Count")
        whole_api = counts("api_statistic.csv", "API Name", "Count")
        self.assertEqual(whole_ops["sim_gemm"], 6)
        p = self.parse(run, "--step-list", "2,3")
        self.assertEqual(p.returncode, 0, p.stderr)
        ops = counts("op_statistic.csv", "OP Type", "Count")
        self.assertEqual(ops, {k: v // 3 for k, v in whole_ops.items()})
        api = counts("api_statistic.csv", "API Name", "Count")
        self.assertNotIn("prof_sim_stream_create", api)   # before step 1
        self.assertNotIn("prof_sim_stream_destroy", api)  # after step 6
        self.assertEqual(api["prof_sim_kernel"], whole_api["prof_sim_kernel"] // 3)
        self.assertEqual(api["prof_sim_malloc"], 2)
        for name in ("communication.json", "communication_matrix.json"):
            with open(run.output(name)) as f:
                self.assertEqual(sorted(json.load(f)), ["step2", "step3"], name)
        rows = run.csv_rows("op_statistic.csv")
        ratio = rows[0].index("Ratio(%)")
        self.assertAlmostEqual(sum(float(r[ratio]) for r in rows[1:]), 100.0, delta=0.05)

    def test_pretty_gzip(self):
        run = self.record()
        p = self.parse(run, "--pretty")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(run.output("trace_view.json")) as f:
            text = f.read()
        self.assertIn('\n      "ph": ', text)
        n = len(json.loads(text)["traceEvents"])
        p = self.parse(run, "--gzip")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(os.path.exists(run.output("trace_view.json")))
        with gzip.open(run.output("trace_view.json.gz"), "rt") as f:
            self.assertEqual(len(json.load(f)["traceEvents"]), n)

    def test_timeline_limit_fits(self):
        run = self.record()
        p = self.parse(run, "--timeline-limit", "1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("prof_truncated", run.trace())

    def test_data_simplification(self):
        run = self.record()
        p = self.parse(run, "--data-simplification", "-q")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertNotIn("\r", p.stderr)   # not a terminal: no progress bar
        self.assertIn("removed", p.stderr)
        self.assertFalse(os.path.exists(run.path("raw")))
        self.assertTrue(os.path.exists(run.output("parse.done")))
        # parsed again: it says why raw/ is gone, not "not a run directory"
        p = self.parse(run)
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertIn("raw/ was removed by --data-simplification after the parse of ", p.stderr)
        self.assertNotIn("not a prof run directory", p.stderr)
        self.assertTrue(os.path.exists(run.output("parse.done")))   # that parse's outputs stay

    def test_bad_values(self):
        run = self.record()
        for opt, val in (("--export-type", "csv"), ("--step-list", "x"),
                         ("--timeline-limit", "-3")):
            p = self.parse(run, opt, val)
            self.assertEqual(p.returncode, 2, (opt, p.stderr))
            self.assertIn(opt, p.stderr)

    def test_run_keys(self):
        opts = {"export_type": ["text", "db"], "step_list": [2, 3], "gzip": True,
                "data_simplification": True}
        run = self.record(workload("tx_steps"), "5", "1",
                          env={"PROF_OPTIONS": json.dumps(opts)})
        self.assertNotIn("not acted on", run.stderr)
        self.assertTrue(os.path.exists(run.output("trace_view.json.gz")))
        self.assertFalse(os.path.exists(run.path("raw")))
        db = sqlite3.connect(run.output("profiler.db"))
        self.assertEqual(sorted(r[0] for r in db.execute("SELECT Step FROM step_trace_time")),
                         [2, 3])
        bad = self.prof_run([workload("tx_steps"), "2", "1"],
                            env={"PROF_OPTIONS": '{"step_list": "a"}'})
        self.assertEqual(bad.rc, 2)
        self.assertIn("step_list", bad.stderr)


def instants(run_dir):
    with open(os.path.join(run_dir, "PROFILER_OUTPUT", "trace_view.json")) as f:
        return [e["name"] for e in json.load(f)["traceEvents"] if e.get("ph") == "i"]


def marks(run_dir, prefix):
    return sorted(int(n.rpartition("-")[2]) for n in instants(run_dir)
                  if n.startswith(prefix + "-"))


class ParseWhileGoing(ProfTestCase):
    """`prof parse` of a run whose prof run is still going (the launcher holds
    the run directory's lock) says so rather than calling it a crash, keeps
    raw/ under --data-simplification, and prof run's own parse at the end
    is whole; two parses of one PROFILER_OUTPUT/ take turns."""

    def test_parse_while_going(self):
        ready, out = os.path.join(self.tmp, "ready"), os.path.join(self.tmp, "out")
        proc = subprocess.Popen([PROF, "run", "-o", out, "--sampling-interval", "0", "--",
                                 workload("tx_killme"), "wait", "50", ready, "0"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while not os.path.exists(ready) and proc.poll() is None:
                self.assertLess(time.monotonic(), deadline, "the program never got ready")
                time.sleep(0.01)
            (name,) = os.listdir(out)
            run_dir = os.path.join(out, name)
            p = subprocess.run([PROF, "parse", "--data-simplification", run_dir],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("%s: the run is still going (its prof run holds it)" % run_dir,
                          p.stderr)
            self.assertIn("streams are still being written (the run is going)", p.stderr)
            self.assertNotIn("no end_info", p.stderr)
            self.assertNotIn("crashed", p.stderr)
            self.assertIn("raw kept: the run is still going", p.stderr)
            self.assertTrue(os.path.isdir(os.path.join(run_dir, "raw")))
            self.assertEqual(marks(run_dir, "main"), list(range(50)))   # so far
            st = subprocess.run([PROF, "stats", run_dir], capture_output=True, text=True,
                                timeout=60)
            self.assertIn("Lost records: not known yet: the run is still going", st.stdout)
            open(ready + ".go", "w").close()
            err = proc.communicate(timeout=120)[1]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        self.assertEqual(proc.returncode, 0, err)
        self.assertEqual(marks(run_dir, "main"), list(range(50)))
        self.assertEqual(instants(run_dir).count("go-seen"), 1)   # the end's parse is whole
        self.assertNotIn("another parse", err)

    def test_parses_take_turns(self):
        run = self.prof_run([workload("tx_steps"), "4", "1"])
        self.assertEqual(run.rc, 0, run.stderr)
        out_dir = run.path("PROFILER_OUTPUT")
        fd = os.open(out_dir, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)   # stands for a parse in progress
            p = subprocess.Popen([PROF, "parse", run.run_dir], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
            line = p.stderr.readline()
            self.assertIn("%s: another parse is writing there; waiting for it to end"
                          % out_dir, line)
            time.sleep(0.3)
            self.assertIsNone(p.poll(), "the parse did not wait")
            self.assertFalse(os.path.exists(os.path.join(out_dir, "parse.done")))
        finally:
            os.close(fd)
        err = p.communicate(timeout=120)[1]
        self.assertEqual(p.returncode, 0, err)
        self.assertTrue(os.path.exists(os.path.join(out_dir, "parse.done")))


if __name__ == "__main__":
    unittest.main()
