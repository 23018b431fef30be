"""The agent and the annotation API, end to end: C and Python programs under
`prof run`, asserting on the content of PROFILER_OUTPUT."""
import collections
import os
import subprocess
import unittest

from proftest import (PYTHON, SRC, ProfTestCase, events, span, thread_names, workload)

THREADS, ITERS, STEPS = 4, 100, 5


class ThreadsWorkload(ProfTestCase):
    def setUp(self):
        super().setUp()
        self.run = self.prof_run([workload("tx_threads"), str(THREADS), str(ITERS), str(STEPS)])
        self.assertEqual(self.run.rc, 0, self.run.stderr)
        self.assertParsedClean(self.run)
        self.trace = self.run.trace()

    def test_range_counts_and_nesting(self):
        xs = events(self.trace, ph="X", cat="user_annotation")
        by_name = collections.Counter(e["name"] for e in xs)
        self.assertEqual(by_name["outer"], THREADS * ITERS)
        self.assertEqual(by_name["inner"], THREADS * ITERS)
        self.assertEqual(by_name["step-body"], STEPS)
        # every inner lies within an outer of the same thread
        outers = collections.defaultdict(list)
        for e in xs:
            if e["name"] == "outer":
                outers[(e["pid"], e["tid"])].append(span(e))
        for e in xs:
            if e["name"] != "inner":
                continue
            s, t = span(e)
            self.assertTrue(any(a <= s and t <= b for a, b in outers[(e["pid"], e["tid"])]),
                            "inner range outside every outer: %r" % e)

    def test_marks(self):
        ticks = events(self.trace, ph="i", name="tick")
        self.assertEqual(len(ticks), THREADS * ITERS)
        self.assertEqual(len({(e["pid"], e["tid"]) for e in ticks}), THREADS)

    def test_thread_names(self):
        names = set(n for n in thread_names(self.trace).values())
        for i in range(THREADS):
            self.assertTrue(any("worker-%d" % i in n for n in names), names)
        self.assertTrue(any("main-loop" in n for n in names), names)

    def test_cross_thread_ranges(self):
        begins = events(self.trace, ph="b")
        ends = events(self.trace, ph="e")
        names = sorted(e["name"] for e in begins)
        self.assertEqual(names, sorted("handoff-%d" % i for i in range(THREADS)))
        self.assertEqual(len(ends), THREADS)
        by_id = {e["id"]: e for e in begins}
        for e in ends:
            b = by_id[e["id"]]
            self.assertNotEqual(b["tid"], e["tid"], "started and ended on one thread")
            self.assertLessEqual(float(b["ts"]), float(e["ts"]))

    def test_steps(self):
        steps = events(self.trace, ph="X", cat="user_annotation")
        steps = sorted((e for e in steps if e["name"].startswith("ProfilerStep#")),
                       key=lambda e: float(e["ts"]))
        self.assertEqual([e["name"] for e in steps], ["ProfilerStep#%d" % n for n in range(1, STEPS + 1)])
        for a, b in zip(steps, steps[1:]):
            self.assertAlmostEqual(span(a)[1], span(b)[0], places=2)
        rows = self.run.csv_rows("step_trace_time.csv")
        self.assertEqual(rows[0], ["Device_id", "Step", "Computing", "Communication(Not Overlapped)",
                                   "Overlapped", "Communication", "Free", "Stage", "Bubble",
                                   "Communication(Not Overlapped and Exclude Receive)", "Preparing"])
        self.assertEqual([r[1] for r in rows[1:]], [str(n) for n in range(1, STEPS + 1)])
        for r in rows[2:]:  # steps 2.. hold one 1 ms sleep each
            self.assertGreaterEqual(float(r[7]), 1000.0)

    def test_metadata(self):
        meta = self.run.json("profiler_metadata.json")
        self.assertEqual(meta["workload"], "tx_threads")
        self.assertEqual(meta["shape"], {"threads": 4, "ok": True})

    def test_info_counts(self):
        info = self.run.json("profiler_info.json")
        end = info["end_info"]
        self.assertEqual(end["exit_code"], 0)
        # 2 records per range (push/pop) plus marks, steps and strings
        self.assertGreater(end["records"], THREADS * ITERS * 5)
        self.assertEqual(end["lost"], 0)


class ForkExec(ProfTestCase):
    def test_both_processes_have_their_events(self):
        run = self.prof_run([workload("tx_fork_exec")])
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertParsedClean(run)
        trace = run.trace()
        pid_of = {}
        for name in ("parent-before-fork", "parent-after-wait", "child-before-exec", "after-exec"):
            found = events(trace, ph="i", name=name)
            self.assertEqual(len(found), 1, name)
            pid_of[name] = found[0]["pid"]
        self.assertEqual(pid_of["parent-before-fork"], pid_of["parent-after-wait"])
        self.assertEqual(pid_of["child-before-exec"], pid_of["after-exec"])
        self.assertNotEqual(pid_of["parent-before-fork"], pid_of["child-before-exec"])
        procs = {e["pid"] for e in trace["traceEvents"]
                 if e.get("ph") == "M" and e.get("name") == "process_name"}
        self.assertIn(pid_of["parent-before-fork"], procs)
        self.assertIn(pid_of["after-exec"], procs)


class CleanEnds(ProfTestCase):
    """Leaving by exec or _exit is not a crash: no stream is reported unclosed."""

    def test_shell_exec_and_exit(self):
        run = self.prof_run(["sh", "-c", "sleep 0.05; exit 5"])
        self.assertEqual(run.rc, 5, run.stderr)
        self.assertNotIn("without close", run.stderr)
        self.assertParsedClean(run)

    def test_python_os_exit(self):
        run = self.prof_run([PYTHON, "-c", "import os; os._exit(3)"])
        self.assertEqual(run.rc, 3, run.stderr)
        self.assertNotIn("without close", run.stderr)


class Crashes(ProfTestCase):
    def marks(self, run):
        return sorted(int(e["name"].split("-")[1]) for e in run.trace()["traceEvents"]
                      if e.get("ph") == "i" and e.get("name", "").startswith("event-"))

    def test_sigkill_loses_nothing(self):
        count = 20000  # several chunks' worth of strings and marks
        run = self.prof_run([workload("tx_crash"), "kill", str(count)])
        self.assertEqual(run.rc, -9, run.stderr)   # prof dies of it too
        self.assertIn("signal 9", run.stderr)
        self.assertIn("1 of 3 streams ended without close", run.stderr)
        self.assertEqual(self.marks(run), list(range(count)))

    def test_segfault_mirrored_and_recovered(self):
        run = self.prof_run([workload("tx_crash"), "segv", "500"])
        self.assertEqual(run.rc, -11, run.stderr)
        self.assertIn("signal 11", run.stderr)
        self.assertEqual(self.marks(run), list(range(500)))


class PythonApi(ProfTestCase):
    def test_python_calls_recorded(self):
        run = self.prof_run([PYTHON, os.path.join(SRC, "test", "workloads", "tx_python.py")])
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertParsedClean(run)
        self.assertIn("enabled True", run.stdout)
        trace = run.trace()
        xs = collections.Counter(e["name"] for e in events(trace, ph="X", cat="user_annotation"))
        self.assertEqual(xs["py-step-body"], 4)
        self.assertEqual(xs["py-inner"], 4)
        self.assertEqual(xs["decorated"], 4)
        self.assertEqual(xs["py-worker"], 3)
        self.assertEqual(sum(1 for n in xs if n.startswith("ProfilerStep#")), 4)
        marks = collections.Counter(e["name"] for e in events(trace, ph="i"))
        self.assertEqual(marks["inside-decorated"], 4)
        self.assertEqual(marks["while-stopped"], 0)
        self.assertEqual(marks["after-restart"], 1)
        workers = {e["tid"] for e in events(trace, ph="X", name="py-worker")}
        mains = {e["tid"] for e in events(trace, ph="X", name="py-step-body")}
        self.assertTrue(workers.isdisjoint(mains))
        meta = run.json("profiler_metadata.json")
        self.assertEqual(meta["framework"], "none")
        self.assertEqual(meta["config"], {"layers": 2, "names": ["a", "b"]})

    def test_noop_without_prof(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PROF_AGENT_")}
        env["PYTHONPATH"] = os.path.join(SRC, "share", "prof", "python")
        out = subprocess.run([PYTHON, os.path.join(SRC, "test", "workloads", "tx_python.py")],
                             capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("enabled False", out.stdout)

    def test_c_program_runs_without_prof(self):
        out = subprocess.run([workload("tx_threads"), "2", "10", "2"], capture_output=True,
                             text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("2 threads x 10 iterations", out.stdout)


class DelayDuration(ProfTestCase):
    DELAY, DURATION, STEPS = 0.3, 0.3, 400   # 2.9 ms steps: 1.2 s outlast the window

    def test_window_records_a_contiguous_run_of_steps(self):
        demo = os.path.join(os.environ["PROF_BUILD"], "examples", "train_demo")
        run = self.prof_run([demo, str(self.STEPS)], "--delay", str(self.DELAY),
                            "--duration", str(self.DURATION))
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertParsedClean(run)
        trace = run.trace()
        steps = sorted(int(e["name"].split("#")[1]) for e in events(trace, ph="X")
                       if e["name"].startswith("ProfilerStep#"))
        self.assertTrue(steps, "no step recorded in the window")
        self.assertEqual(steps, list(range(steps[0], steps[-1] + 1)))
        windows = [e for e in events(trace, ph="X") if e["name"].startswith("Window #")]
        self.assertEqual(len(windows), 1, windows)
        w0, w1 = span(windows[0])
        # the trace's time 0 is the launch: the window opened after the
        # delay, when the launcher switched recording on ("launcher"), or
        # when the program began if that was later ("start": under TSan on
        # a loaded machine it may begin 0.2 s after the launch)
        self.assertRegex(windows[0]["name"], r"\((launcher|start)\)$")
        self.assertGreaterEqual(w0, self.DELAY * 1e6, "recording began before the delay")
        if "(launcher)" in windows[0]["name"]:
            self.assertGreaterEqual(w1 - w0, 0.9 * self.DURATION * 1e6,
                                    "the window closed before the duration")
        self.assertIn("recording stopped (duration %g s)" % self.DURATION, run.stderr)
        self.assertLess(steps[-1], self.STEPS, "recording went on past the duration")
        # The launcher reads its clock just after the switch: a range the
        # program began in between may start a moment before the window.
        for e in events(trace, ph="X", cat="user_annotation"):
            self.assertTrue(w0 - 2000 <= span(e)[0] <= w1, (e, w0, w1))


if __name__ == "__main__":
    unittest.main()
