"""The kill matrix: a recorded program dies in every way a program dies
(SIGKILL, SIGSEGV, SIGABRT, _exit from a worker thread, Python's os._exit),
at several points (before any record, within the first chunk, after many
chunks), and prof itself is signalled (SIGTERM, SIGINT twice, SIGINT during
the parse, SIGKILL). In every case the records committed before the end are
all parsed, prof ends as the program did (its exit status, or death by the
same signal once the parse is done), and `prof parse` on the run directory
works afterwards.

Workloads: test/workloads/tx_killme.c and tx_killme.py. Threads mark
"<prefix>-<k>" for k = 0..N-1 and sync before the death, so those marks are
committed and must all be there; a "spinner" thread marks without end while
the process dies, so its marks must be a gap-free prefix 0..n-1."""
import collections
import json
import os
import resource
import signal
import subprocess
import time
import unittest

from proftest import PROF, PYTHON, SRC, ProfTestCase, Run, workload

MID, LATE = 500, 40000     # marks per thread: within chunk 0; about 3 chunks
THREADS = 3                # workers beside the main thread
SPIN_MIN = 100             # the spinner's marks before the death
PY_WORKLOAD = os.path.join(SRC, "test", "workloads", "tx_killme.py")


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def marks_by_prefix(trace):
    """{prefix: sorted [k, ...]} for instant marks named "<prefix>-<k>"."""
    out = collections.defaultdict(list)
    for e in trace["traceEvents"]:
        if e.get("ph") != "i":
            continue
        prefix, _, k = e.get("name", "").rpartition("-")
        if prefix and k.isdigit():
            out[prefix].append(int(k))
    return {p: sorted(v) for p, v in out.items()}


def load_trace(run_dir):
    with open(os.path.join(run_dir, "PROFILER_OUTPUT", "trace_view.json")) as f:
        return json.load(f)


# name, command (N filled in), prof's return code (-N: died of signal N, as
# the program did), signal or None, exact prefixes, spinner prefix or None,
# whether streams end unclosed (killed by a signal).
C_THREADS = ["main"] + ["w%d" % i for i in range(THREADS)]
MATRIX = [
    ("sigkill", ["kill"], -9, 9, C_THREADS, "spin", True),
    ("sigsegv", ["segv"], -11, 11, C_THREADS, "spin", True),
    ("sigabrt", ["abort"], -6, 6, C_THREADS, "spin", True),
    ("thread_exit", ["thread-exit"], 9, None, C_THREADS, "spin", False),
    ("exit", ["exit"], 7, None, C_THREADS, "spin", False),
    ("py_os_exit_main", ["py", "main"], 5, None, ["py-main", "py-w"], "py-spin", False),
    ("py_os_exit_thread", ["py", "thread"], 5, None, ["py-main", "py-w"], "py-spin", False),
]
POINTS = [("start", 0), ("mid", MID), ("late", LATE)]


def command(how, n):
    if how[0] == "py":
        return [PYTHON, PY_WORKLOAD, how[1], str(n)]
    return [workload("tx_killme"), how[0], str(n), str(THREADS)]


def setUpModule():
    no_core()   # SIGSEGV and SIGABRT rows: no core files (inherited)


class KillMatrix(ProfTestCase):
    """The program dies; prof mirrors it and parses everything committed."""

    def run_row(self, how, n, rc, sig, exact, spin, unclosed):
        run = self.prof_run(command(how, n), "--sampling-interval", "0")
        self.assertEqual(run.rc, rc, run.stderr)
        # killed before its first record, a process has no stream to leave
        unclosed = unclosed and n > 0
        if sig:
            self.assertIn("killed by signal %d (" % sig, run.stderr)
            self.assertEqual("streams ended without close" in run.stderr, unclosed, run.stderr)
            if unclosed:   # said for what it is: the program's death, not a crash of ours
                self.assertIn("streams ended without close, as the program died of SIG",
                              run.stderr)
        else:
            self.assertNotIn("killed by signal", run.stderr)
            self.assertNotIn("without close", run.stderr)
        self.assertTrue(os.path.exists(run.output("parse.done")), run.stderr)
        self.assertNotIn("damaged", run.stderr)
        end = run.json("profiler_info.json")["end_info"]
        self.assertEqual((end["signal"], end["exit_code"]), (sig, None if sig else rc))
        self.assertEqual(end["lost"], 0)
        self.check_marks(marks_by_prefix(run.trace()), n, exact, spin)
        # Parsing again from the raw data alone gives the same records.
        p = subprocess.run([PROF, "parse", run.run_dir], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual("ended without close" in p.stderr, unclosed, p.stderr)
        self.check_marks(marks_by_prefix(load_trace(run.run_dir)), n, exact, spin)

    def check_marks(self, got, n, exact, spin):
        for prefix in exact:
            self.assertEqual(got.get(prefix, []), list(range(n)), prefix)
        if n == 0:
            self.assertEqual(got, {})
            return
        spun = got.get(spin, [])
        self.assertGreaterEqual(len(spun), SPIN_MIN)
        self.assertEqual(spun, list(range(len(spun))), "the spinner's marks have a gap")
        self.assertEqual(set(got), set(exact) | {spin})

    def test_matrix(self):
        for name, how, rc, sig, exact, spin, unclosed in MATRIX:
            for point, n in POINTS:
                with self.subTest("%s_at_%s" % (name, point)):
                    self.run_row(how, n, rc, sig, exact, spin, unclosed)


class ProfSignalled(ProfTestCase):
    """prof itself gets the signal."""

    def start(self, n, need, *options):
        self.ready = os.path.join(self.tmp, "ready")
        self.out = os.path.join(self.tmp, "out")
        cmd = [PROF, "run", "-o", self.out, "--sampling-interval", "0", *options, "--",
               workload("tx_killme"), "wait", str(n), self.ready, str(need)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.wait_file(self.ready)

    def wait_file(self, path, timeout=60):
        deadline = time.monotonic() + timeout
        while not os.path.exists(path):
            if self.proc.poll() is not None:
                self.fail("prof ended early: %s" % self.proc.stderr.read())
            if time.monotonic() > deadline:
                self.proc.kill()
                self.fail("%s never appeared" % path)
            time.sleep(0.01)

    def finish(self, timeout=120):
        out, err = self.proc.communicate(timeout=timeout)
        return Run(subprocess.CompletedProcess(self.proc.args, self.proc.returncode, out, err),
                   self.out)

    def parse_again(self, run, *needles):
        p = subprocess.run([PROF, "parse", run.run_dir], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        for needle in needles:
            self.assertIn(needle, p.stderr)
        return marks_by_prefix(load_trace(run.run_dir)), p

    def child_pid(self):
        """The program's pid, from profiler_info.json: prof rewrites it with
        child_pid once the exec is done, maybe after the program started."""
        path = os.path.join(self.out, os.listdir(self.out)[0], "profiler_info.json")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with open(path) as f:
                pid = json.load(f).get("child_pid")
            if pid:
                return pid
            time.sleep(0.01)
        self.fail("profiler_info.json never got child_pid")

    def test_sigterm_forwarded(self):
        self.start(1000, 1)
        self.proc.send_signal(signal.SIGTERM)
        run = self.finish()
        self.assertEqual(run.rc, -signal.SIGTERM, run.stderr)   # died of it too
        self.assertIn("killed by signal 15 (SIGTERM)", run.stderr)
        want = {"main": list(range(1000)), "got-SIGTERM": [1]}
        self.assertEqual(marks_by_prefix(run.trace()), want)
        got, _ = self.parse_again(run)
        self.assertEqual(got, want)

    def test_sigint_twice_while_running(self):
        # Both reach the program, which takes the first and dies of the second.
        self.start(1000, 2)
        self.proc.send_signal(signal.SIGINT)
        self.wait_file(self.ready + ".1")
        self.proc.send_signal(signal.SIGINT)
        run = self.finish()
        self.assertEqual(run.rc, -signal.SIGINT, run.stderr)
        self.assertIn("killed by signal 2 (SIGINT)", run.stderr)
        want = {"main": list(range(1000)), "got-SIGINT": [1, 2]}
        self.assertEqual(marks_by_prefix(run.trace()), want)
        self.assertEqual(self.parse_again(run)[0], want)

    def test_second_sigint_during_parse(self):
        # The first SIGINT goes to the program, which takes it and goes on;
        # the second comes once the program has ended, while prof finishes
        # and parses: prof stops, says how to parse, and dies of it; the
        # raw data is complete and `prof parse` reads it all.
        n = 300000   # a parse of a second or more on a loaded machine
        self.start(n, 0)
        child = self.child_pid()
        self.proc.send_signal(signal.SIGINT)
        self.wait_file(self.ready + ".1")
        open(self.ready + ".go", "w").close()
        deadline = time.monotonic() + 60
        while os.path.exists("/proc/%d" % child) and time.monotonic() < deadline:
            time.sleep(0.005)   # reaped by prof: it is past its wait
        # A signal that comes as the program ends, before prof has left its
        # wait, is dropped (it was meant for the program): send again.
        for _ in range(100):
            if self.proc.poll() is not None:
                break
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                pass
        run = self.finish()
        if run.rc == 0 and "prof: wrote" in run.stderr:
            self.skipTest("prof finished its parse before the second SIGINT came")
        self.assertEqual(run.rc, -signal.SIGINT, run.stderr)   # died of it
        self.assertIn("prof: interrupted by a signal; %s: the raw data is kept, run "
                      "`prof parse %s`" % (run.run_dir, run.run_dir), run.stderr)
        self.assertFalse(os.path.exists(run.output("parse.done")))
        got, _ = self.parse_again(run)
        self.assertEqual(got, {"main": list(range(n)), "got-SIGINT": [1]})
        names = collections.Counter(e["name"] for e in load_trace(run.run_dir)["traceEvents"]
                                    if e.get("ph") == "i")
        self.assertEqual(names["go-seen"], 1)

    def test_prof_sigkilled(self):
        # The program runs on without prof (no parent-death signal: a dying
        # profiler must not take the job with it) and records to the end;
        # profiler_info.json has no end_info and the parse says so.
        self.start(1000, 0)
        child = self.child_pid()
        self.proc.kill()
        # Not communicate(): the program still holds the pipes.
        self.assertEqual(self.proc.wait(timeout=30), -signal.SIGKILL)
        self.assertTrue(os.path.exists("/proc/%d" % child), "the program died with prof")
        open(self.ready + ".go", "w").close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not self.gone(child):
            time.sleep(0.01)
        self.assertTrue(self.gone(child), "the program did not finish")
        self.proc.communicate(timeout=30)
        run_dir = os.path.join(self.out, os.listdir(self.out)[0])
        with open(os.path.join(run_dir, "profiler_info.json")) as f:
            self.assertNotIn("end_info", json.load(f))
        p = subprocess.run([PROF, "parse", run_dir], capture_output=True, text=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("profiler_info.json: no end_info: prof did not finish the run (it was "
                      "killed, or its machine went down)", p.stderr)
        trace = load_trace(run_dir)
        self.assertEqual(marks_by_prefix(trace), {"main": list(range(1000))})
        names = [e["name"] for e in trace["traceEvents"] if e.get("ph") == "i"]
        self.assertEqual(names.count("go-seen"), 1)

    @staticmethod
    def gone(pid):
        """Ended: no /proc entry, or a zombie nobody reaps yet."""
        try:
            with open("/proc/%d/stat" % pid) as f:
                return f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except (FileNotFoundError, ProcessLookupError):
            return True


if __name__ == "__main__":
    unittest.main()
