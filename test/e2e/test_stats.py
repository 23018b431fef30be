"""prof stats: summary tables from a run's PROFILER_OUTPUT CSVs, checked
against the CSVs themselves."""
import collections
import csv
import io
import json
import os
import shutil
import signal
import subprocess
import time
import unittest

from proftest import PROF, PYTHON, SRC, ProfTestCase, workload


def has_torch():
    return subprocess.run([PYTHON, "-c", "import torch"], capture_output=True).returncode == 0


def stats(run_dir, *options):
    p = subprocess.run([PROF, "stats", *options, run_dir], capture_output=True, text=True,
                       timeout=60)
    return p


def body_rows(out, title_start):
    """The data rows of the table whose title starts with title_start."""
    lines = out.splitlines()
    i = next(k for k, l in enumerate(lines) if l.startswith(title_start))
    rows = []
    for l in lines[i + 3:]:
        if not l.strip():
            break
        rows.append(l)
    return rows


class StatsCase(ProfTestCase):
    def assertFits(self, out):
        for line in out.splitlines():
            self.assertLessEqual(len(line), 80, line)

    def ok(self, run_dir, *options):
        p = stats(run_dir, *options)
        self.assertEqual(p.returncode, 0, p.stderr)
        if "--format" not in options:
            self.assertFits(p.stdout)
        return p.stdout


class HostSteps(StatsCase):
    def setUp(self):
        super().setUp()
        self.run = self.prof_run([workload("tx_steps"), "6", "2"])
        self.assertEqual(self.run.rc, 0, self.run.stderr)
        self.steps = self.run.csv_rows("step_trace_time.csv")[1:]

    def test_overview(self):
        out = self.ok(self.run.run_dir)
        total = sum(float(r[7]) for r in self.steps)      # host rows: Stage
        self.assertIn("Steps: 6 ", out)
        self.assertIn("total %.3f ms" % (total / 1000), out)
        self.assertIn("average %.3f ms" % (total / 6000), out)
        stage = sorted(float(r[7]) for r in self.steps)
        self.assertIn("median %.3f ms" % ((stage[2] + stage[3]) / 2 / 1000), out)
        # host-only steps: no device split that would call it all "device idle"
        self.assertIn("no device activity was recorded", out)
        self.assertNotIn("Free (device idle)", out)
        # the overview's operators by self time (totals list the wrappers first);
        # no device: no Device column, no device task section
        self.assertIn("Operators by self time", out)
        self.assertNotIn("Ranks", out)   # a run of one rank: no ranks part
        self.assertNotIn("Device(ms)", out)
        self.assertNotIn("Device tasks", out)
        # report.html's findings (findings.json): none fire on this run
        with open(self.run.output("findings.json")) as f:
            self.assertEqual(json.load(f), [])
        self.assertIn("Findings (report.html): none; no rule fired", out)
        os.remove(self.run.output("findings.json"))   # --no-report, an older prof
        self.assertNotIn("Findings", self.ok(self.run.run_dir))

    def test_steps_view_matches_csv(self):
        out = self.ok(self.run.run_dir, "--view", "steps", "--unit", "us")
        rows = [l.split() for l in body_rows(out, "Steps")]
        self.assertEqual([int(r[0]) for r in rows], [1, 2, 3, 4, 5, 6])
        for r, c in zip(rows, self.steps):
            self.assertEqual(r[1], "-1")
            self.assertEqual(r[2], c[7])    # Total = Stage for a host-only step
            self.assertEqual(r[6], c[6])    # Free

    def test_csv_and_json(self):
        out = self.ok(self.run.run_dir, "--view", "steps", "--format", "csv", "--unit", "s")
        rows = list(csv.reader(io.StringIO(out)))
        self.assertEqual(rows[0][0], "Step")
        self.assertEqual(rows[0][2], "Total(s)")
        self.assertEqual(len(rows), 7)
        self.assertAlmostEqual(float(rows[1][2]), float(self.steps[0][7]) / 1e6, places=6)
        j = json.loads(self.ok(self.run.run_dir, "--view", "all", "--format", "json"))
        self.assertEqual(j["unit"], "ms")
        self.assertEqual(j["overview"]["steps"], 6)
        self.assertEqual(len(j["steps"]), 6)
        self.assertEqual(j["operators"], [])

    def test_bad_options(self):
        for opt, val in (("--view", "nope"), ("--sort", "size"), ("--unit", "h"),
                         ("--format", "xml"), ("--top", "-1"), ("--top", "ten")):
            p = stats(self.run.run_dir, opt, val)
            self.assertEqual(p.returncode, 2, (opt, val))
            self.assertIn(opt, p.stderr)
        p = stats(self.run.run_dir, "--view", "all", "--format", "csv")
        self.assertEqual(p.returncode, 2)
        p = subprocess.run([PROF, "stats", "--bogus", self.run.run_dir], capture_output=True,
                           text=True)
        self.assertEqual(p.returncode, 2)

    def test_help_lists_every_option(self):
        p = subprocess.run([PROF, "stats", "--help"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0)
        for opt in ("--view", "--sort", "--top", "--unit", "--op", "--format", "--help"):
            self.assertIn(opt, p.stdout)
        self.assertFits(p.stdout)

    def test_unparsed_and_absent_files(self):
        os.remove(self.run.output("parse.done"))
        p = stats(self.run.run_dir)
        self.assertEqual(p.returncode, 1)
        self.assertIn("prof parse", p.stderr)
        open(self.run.output("parse.done"), "w").close()
        os.remove(self.run.output("api_statistic.csv"))
        os.remove(self.run.output("step_trace_time.csv"))
        out = self.ok(self.run.run_dir, "--view", "all")
        self.assertIn("Device API calls: no data (file absent", out)
        self.assertIn("Steps: no data (file absent", out)
        j = json.loads(self.ok(self.run.run_dir, "--view", "all", "--format", "json"))
        self.assertIsNone(j["api"])
        self.assertNotIn("ranks", j)   # "all" leaves out what a run of one rank lacks
        # asked for: said
        self.assertIn("Ranks: no data (no cluster_analysis_output/: a run of one rank)",
                      self.ok(self.run.run_dir, "--view", "ranks"))
        j = json.loads(self.ok(self.run.run_dir, "--view", "ranks", "--format", "json"))
        self.assertIsNone(j["ranks"])

    def test_a_directory_of_runs(self):
        # ./prof_data after a few runs: the one run is taken, several named
        holder = os.path.dirname(self.run.run_dir)
        self.assertIn("Steps:", self.ok(holder))
        again = self.prof_run([workload("tx_steps"), "3", "1"])
        self.assertEqual(again.rc, 0, again.stderr)
        self.assertEqual(os.path.dirname(again.run_dir), holder)
        p = stats(holder)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("%s holds 2 runs; name one (oldest first):" % holder, p.stderr)
        self.assertIn("  %s   (the newest)" % again.run_dir, p.stderr)
        self.assertIn("  %s\n" % self.run.run_dir, p.stderr)
        self.assertNotIn("as the ranks", p.stderr)   # no analysis of ranks to offer
        empty = os.path.join(self.tmp, "empty")
        os.mkdir(empty)
        p = stats(empty)
        self.assertEqual(p.returncode, 1)
        self.assertIn("not a run directory (no raw/, no PROFILER_OUTPUT/), nor one that holds "
                      "runs", p.stderr)


class Archives(StatsCase):
    """prof stats of a run packed as prof run --archive packs it (a CI
    artefact): read from a temporary copy that is gone afterwards."""

    def stats_in(self, tmpdir, *args):
        env = dict(os.environ, TMPDIR=tmpdir)
        return subprocess.run([PROF, "stats", *args], capture_output=True, text=True,
                              timeout=60, env=env)

    def archived(self, steps, threads):
        """A tx_steps run packed by --archive tar.gz: the run, its archive
        and an empty TMPDIR for prof stats."""
        run = self.prof_run([workload("tx_steps"), str(steps), str(threads)],
                            "--archive", "tar.gz")
        self.assertEqual(run.rc, 0, run.stderr)
        tmp = os.path.join(self.tmp, "t")
        os.mkdir(tmp)
        return run, run.run_dir + ".tar.gz", tmp

    def test_a_parsed_archive(self):
        run, arc, tmp = self.archived(4, 2)
        for view in ("overview", "ops", "steps"):
            want = self.ok(run.run_dir, "--view", view)
            p = self.stats_in(tmp, "--view", view, arc)
            self.assertEqual(p.returncode, 0, p.stderr)
            if view == "overview":   # named as the user named it
                first = p.stdout.split("\n", 1)[0]   # cut in its middle to 80 columns
                self.assertTrue(first.startswith("Run: /") and first.endswith("_prof.tar.gz"),
                                first)
                want = want.split("\n", 1)[1]
                got = p.stdout.split("\n", 1)[1]
            else:
                got = p.stdout
            self.assertEqual(got, want, view)
        j = json.loads(self.stats_in(tmp, "--format", "json", arc).stdout)
        self.assertEqual(j["run"], arc)
        self.assertEqual(os.listdir(tmp), [])   # the copy is gone

    def test_signals_leave_no_copy(self):
        # a closed pipe (`prof stats big.tar.gz | head`) and a kill while prof
        # writes: prof dies of the signal, its temporary copy removed first
        _, arc, tmp = self.archived(2000, 1)
        env = dict(os.environ, TMPDIR=tmp)
        cmd = [PROF, "stats", "--view", "steps", arc]   # ~160 KB: more than a pipe holds
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.assertTrue(p.stdout.readline().startswith(b"Steps ("))
        p.stdout.close()
        self.assertEqual(p.wait(timeout=60), -signal.SIGPIPE)
        self.assertEqual(os.listdir(tmp), [])
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 30
        while not os.listdir(tmp) and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertTrue(os.listdir(tmp), "no temporary copy was made")
        time.sleep(0.2)   # reading it, or blocked on the full pipe: either will do
        p.send_signal(signal.SIGTERM)
        self.assertEqual(p.wait(timeout=60), -signal.SIGTERM)
        p.stdout.close()
        self.assertEqual(os.listdir(tmp), [])

    def test_unparsed_and_bad_archives(self):
        run = self.prof_run([workload("tx_steps"), "2", "1"], "--no-parse", "--archive", "zip")
        self.assertEqual(run.rc, 0, run.stderr)
        arc = run.run_dir + ".zip"
        tmp = os.path.join(self.tmp, "t")
        os.mkdir(tmp)
        p = self.stats_in(tmp, arc)
        self.assertEqual(p.returncode, 1)
        self.assertIn("prof stats: %s holds a run that has not been parsed (no "
                      "PROFILER_OUTPUT/parse.done); 'prof parse %s' extracts and parses "
                      "it" % (arc, arc), p.stderr)
        junk = os.path.join(self.tmp, "junk.tar.gz")
        with open(junk, "w") as f:
            f.write("not an archive\n")
        p = self.stats_in(tmp, junk)
        self.assertEqual(p.returncode, 1)
        self.assertIn("prof stats: %s: refused: not a readable archive" % junk, p.stderr)
        self.assertEqual(os.listdir(tmp), [])
        p = self.stats_in(tmp, os.path.join(self.tmp, "missing.tar.gz"))
        self.assertEqual(p.returncode, 1)
        self.assertIn("not a run directory: No such file or directory", p.stderr)


class DeviceTasks(StatsCase):
    def setUp(self):
        super().setUp()
        self.run = self.prof_run([workload("sim_overlap")])
        self.assertEqual(self.run.rc, 0, self.run.stderr)

    def test_kernels_match_op_statistic(self):
        dev = [r for r in self.run.csv_rows("op_statistic.csv")[1:] if r[0] != "-1"]
        self.assertTrue(dev)
        out = self.ok(self.run.run_dir, "--view", "kernels", "--top", "0")
        rows = [l.split() for l in body_rows(out, "Device tasks")]
        self.assertEqual(len(rows), len(dev))
        by_name = {r[0]: r for r in rows}
        for d in dev:
            self.assertEqual(by_name[d[1]][1], d[3])                           # calls
            self.assertEqual(by_name[d[1]][2], "%.3f" % (float(d[4]) / 1000))  # total ms
        totals = [float(r[2]) for r in rows]
        self.assertEqual(totals, sorted(totals, reverse=True))

    def test_top_and_sort(self):
        out = self.ok(self.run.run_dir, "--view", "kernels", "--top", "2", "--sort", "min")
        rows = [l.split() for l in body_rows(out, "Device tasks")]
        self.assertEqual(len(rows), 2)
        mins = [float(r[4]) for r in rows]
        self.assertEqual(mins, sorted(mins))
        out = self.ok(self.run.run_dir, "--view", "api", "--sort", "count", "--format", "csv")
        rows = list(csv.reader(io.StringIO(out)))[1:]
        counts = [int(r[2]) for r in rows]
        self.assertEqual(counts, sorted(counts, reverse=True))
        api = self.run.csv_rows("api_statistic.csv")[1:]
        self.assertEqual(sorted(r[0] for r in rows), sorted(r[2] for r in api))

    def test_step_breakdown(self):
        st = self.run.csv_rows("step_trace_time.csv")[1:]
        out = self.ok(self.run.run_dir, "--view", "steps", "--unit", "us")
        rows = [l.split() for l in body_rows(out, "Steps")]
        self.assertEqual(len(rows), len(st))
        r, c = rows[0], st[0]
        self.assertEqual(r[3], c[2])     # Computing
        self.assertEqual(r[4], c[3])     # Communication (not overlapped)
        self.assertEqual(r[5], c[4])     # Overlapped
        total = float(c[10]) + float(c[7]) + float(c[8])   # Preparing + Stage + Bubble
        self.assertAlmostEqual(float(r[2]), total, places=2)
        out = self.ok(self.run.run_dir)
        self.assertIn("Computing", out)
        self.assertIn("gemm", out)

    def test_memory_view(self):
        out = self.ok(self.run.run_dir, "--view", "memory")
        self.assertIn("Memory per component", out)
        self.assertIn("Largest allocations", out)


@unittest.skipUnless(has_torch(), "needs torch")
class Operators(StatsCase):
    def setUp(self):
        super().setUp()
        self.run = self.prof_run([PYTHON, os.path.join(SRC, "share/prof/examples/train.py"),
                                  "--steps", "5"], timeout=300)
        self.assertEqual(self.run.rc, 0, self.run.stderr)
        self.ops = self.run.csv_rows("operator_details.csv")[1:]
        self.assertTrue(self.ops)

    def test_ops_view(self):
        out = self.ok(self.run.run_dir, "--view", "ops", "--format", "json", "--top", "0",
                      "--unit", "us")
        rows = json.loads(out)["operators"]
        names = {r[0] for r in self.ops}
        self.assertEqual({r["name"] for r in rows}, names)
        for r in rows:
            calls = [o for o in self.ops if o[0] == r["name"]]
            self.assertEqual(r["calls"], len(calls))
            self.assertAlmostEqual(r["total"], sum(float(o[4]) for o in calls), places=1)
            self.assertAlmostEqual(r["self_total"], sum(float(o[3]) for o in calls), places=1)
        totals = [r["total"] for r in rows]
        self.assertEqual(totals, sorted(totals, reverse=True))
        out = self.ok(self.run.run_dir, "--view", "ops", "--top", "3")
        self.assertEqual(len(body_rows(out, "Operators")), min(3, len(names)))
        # --sort self: by the operators' self time
        out = self.ok(self.run.run_dir, "--view", "ops", "--format", "json", "--top", "0",
                      "--sort", "self")
        selfs = [r["self_total"] for r in json.loads(out)["operators"]]
        self.assertEqual(selfs, sorted(selfs, reverse=True))
        out = self.ok(self.run.run_dir, "--view", "ops", "--sort", "self")
        self.assertIn("Operators by self time", out)
        self.assertNotIn("Ranks", out)   # a run of one rank: no ranks part
        self.assertNotIn("Device(ms)", out)   # a CPU-only run: no column of zeros

    def test_op_calls(self):
        name = self.ops[0][0]
        calls = [o for o in self.ops if o[0] == name]
        out = self.ok(self.run.run_dir, "--op", name, "--unit", "us")
        rows = body_rows(out, "%d calls of" % len(calls))
        self.assertEqual(len(rows), len(calls))
        self.assertEqual(rows[0].split()[1], calls[0][4])
        out = self.ok(self.run.run_dir, "--op", name, "--format", "csv")
        self.assertEqual(len(list(csv.reader(io.StringIO(out)))), len(calls) + 1)
        p = stats(self.run.run_dir, "--op", "no_such_operator")
        self.assertEqual(p.returncode, 1)
        self.assertIn("no_such_operator", p.stderr)

    def test_where_steps(self):
        # Each row's Step Id is the step whose span holds the operator's
        # start: checked against the trace's ProfilerStep spans.
        self.assertEqual(self.run.csv_rows("operator_details.csv")[0][-1], "Step Id")
        steps = {int(r[1]) for r in self.steps_rows()}
        self.assertEqual({r[-1] for r in self.ops} - {""}, {str(s) for s in steps})
        spans = [(e["ts"], e["ts"] + e["dur"], int(e["name"][13:]))
                 for e in self.run.trace()["traceEvents"]
                 if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")]
        per_step = collections.Counter()
        names = {r[0] for r in self.ops}   # record_function's too (user_annotation)
        for e in self.run.trace()["traceEvents"]:
            if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation") and \
               e["name"] in names:
                per_step[next((n for a, b, n in spans if a <= e["ts"] < b), "")] += 1
        csv_steps = collections.Counter(int(r[-1]) if r[-1] else "" for r in self.ops)
        self.assertEqual(csv_steps, per_step)
        self.assertGreater(csv_steps[""], 0)   # set-up before step 1
        # --where: the two parts add up to the whole, name by name
        def ops(where):
            out = self.ok(self.run.run_dir, "--view", "ops", "--format", "json", "--top", "0",
                          "--unit", "us", "--where", where)
            return {r["name"]: r for r in json.loads(out)["operators"]}
        every, inside, outside = ops("all"), ops("steps"), ops("outside")
        for name, r in every.items():
            calls = inside.get(name, {}).get("calls", 0) + outside.get(name, {}).get("calls", 0)
            self.assertEqual(calls, r["calls"], name)
        self.assertEqual(sum(r["calls"] for r in inside.values()),
                         sum(1 for r in self.ops if r[-1]))
        out = self.ok(self.run.run_dir, "--format", "json", "--unit", "us")
        split = json.loads(out)["operators_split"]
        self.assertEqual(split["in_steps"]["calls"], sum(1 for r in self.ops if r[-1]))
        self.assertEqual(split["outside_steps"]["calls"], sum(1 for r in self.ops if not r[-1]))
        self.assertAlmostEqual(split["outside_steps"]["self"],
                               sum(float(r[3]) for r in self.ops if not r[-1]), places=1)
        out = " ".join(self.ok(self.run.run_dir).split())   # the line is folded
        self.assertIn("outside every step (%d calls" % split["outside_steps"]["calls"], out)
        self.assertIn("`prof stats --view ops --where outside` lists them", out)
        name = self.ops[0][0]
        out = self.ok(self.run.run_dir, "--op", name, "--where", "steps", "--format", "csv")
        rows = list(csv.DictReader(io.StringIO(out)))
        self.assertEqual([r["Step"] for r in rows],
                         [o[-1] for o in self.ops if o[0] == name and o[-1]])

    def test_where_needs_step_id(self):
        # A run parsed by an older prof: no Step Id column. The default view
        # still reads it; --where says to parse again.
        path = self.run.output("operator_details.csv")
        rows = self.run.csv_rows("operator_details.csv")
        with open(path, "w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(r[:-1] for r in rows)
        self.ok(self.run.run_dir, "--view", "ops")
        out = self.ok(self.run.run_dir)
        self.assertNotIn("outside every step", out)
        p = stats(self.run.run_dir, "--view", "ops", "--where", "steps")
        self.assertEqual(p.returncode, 1)
        self.assertIn("no Step Id column", p.stderr)
        self.assertIn("prof parse", p.stderr)

    def steps_rows(self):
        return self.run.csv_rows("step_trace_time.csv")[1:]


if __name__ == "__main__":
    unittest.main()
