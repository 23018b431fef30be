"""The agent never hangs or crashes a process as it exits or forks (issue
18 §1, §2, §4):
- _exit from a SIGTERM handler that came while the main thread held one of
  the agent's locks (tx_exit_signal) ends at once; it waited for itself
  before;
- Python's os._exit from a signal handler, the same;
- threads ending while their process exits (tx_exit_race, hundreds of
  processes) never crash it; some did (SIGSEGV) before;
- a fork while other threads record and switch windows (tx_fork_busy)
  gives the child none of the parent's stream mappings and only its own
  streams."""
import collections
import glob
import os
import signal
import subprocess
import sys
import time
import unittest

from proftest import PROF, PYTHON, ProfTestCase, Run, events, prof_features, workload


class ExitFromHandler(ProfTestCase):
    def exit_by_signal(self, cmd, ready):
        out = os.path.join(self.tmp, "out")
        proc = subprocess.Popen([PROF, "run", "-o", out, "--sampling-interval", "0", "--"] + cmd,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not (os.path.exists(ready) and open(ready).read().endswith("\n")):
            self.assertLess(time.monotonic(), deadline, "the program never got ready")
            self.assertIsNone(proc.poll(), proc.stderr.read() if proc.poll() is not None else "")
            time.sleep(0.02)
        os.kill(int(open(ready).read()), signal.SIGTERM)
        try:
            stdout, stderr = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            self.fail("the program did not end after _exit: it hangs in prof's exit")
        os.unlink(ready)
        return Run(subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr), out)

    def test_c_exit_while_holding_locks(self):
        # The handler comes while the main thread is mostly inside prof's
        # framework and schedule paths; five times, to come inside them.
        for i in range(5):
            ready = os.path.join(self.tmp, "ready")
            run = self.exit_by_signal([workload("tx_exit_signal"), ready], ready)
            self.assertEqual(run.rc, 3, run.stderr)
            self.assertParsedClean(run)
            self.assertNotIn("ended without close", run.stderr)
            marks = collections.Counter(e["name"] for e in events(run.trace(), ph="i"))
            self.assertGreaterEqual(marks["loop"], 20)

    def test_python_os_exit_from_handler(self):
        ready = os.path.join(self.tmp, "ready")
        script = (
            "import ctypes, os, signal, sys\n"
            "tx = ctypes.CDLL(None)\n"
            "signal.signal(signal.SIGTERM, lambda s, f: os._exit(3))\n"
            "i = 0\n"
            "while True:\n"
            "    tx.prof_mark(b'py')\n"
            "    i += 1\n"
            "    if i == 1000:\n"
            "        open(sys.argv[1], 'w').write('%d\\n' % os.getpid())\n")
        run = self.exit_by_signal([PYTHON, "-c", script, ready], ready)
        self.assertEqual(run.rc, 3, run.stderr)
        self.assertParsedClean(run)
        self.assertNotIn("ended without close", run.stderr)
        marks = collections.Counter(e["name"] for e in events(run.trace(), ph="i"))
        self.assertGreaterEqual(marks["py"], 1000)


class ThreadsEndingAtExit(ProfTestCase):
    def test_no_crash(self):
        children, threads = 300, 8
        r = self.prof_run([workload("tx_exit_race"), str(children), str(threads)],
                          "--sampling-interval", "0", env={"PROF_AGENT_CHUNK_KB": "16"},
                          timeout=600)
        self.assertEqual(r.rc, 0, r.stdout + r.stderr[-2000:])
        self.assertIn("children %d crashed 0" % children, r.stdout)
        self.assertParsedClean(r)
        marks = collections.Counter(e["name"] for e in events(r.trace(), ph="i"))
        self.assertEqual(marks["main"], children)
        self.assertEqual(marks["worker"], children * threads)


class ForkWhileRecording(ProfTestCase):
    # under TSan every child reports the parent's stream mappings (66 each,
    # none of them in flight): its runtime's fork, not the agent's doing
    @unittest.skipIf("tsan" in prof_features(), "a ThreadSanitizer build: fork children inherit all")
    def test_child_gets_its_own_streams_only(self):
        forks = 30
        r = self.prof_run([workload("tx_fork_busy"), str(forks)], "--sampling-interval", "0",
                          timeout=600)
        self.assertEqual(r.rc, 0, r.stdout + r.stderr[-2000:])
        self.assertIn("forks %d inherited 0" % forks, r.stdout)
        self.assertParsedClean(r)
        t = r.trace()
        parent = next(e["pid"] for e in events(t, ph="i", name="parent"))
        child_marks = events(t, ph="i", name="child")
        self.assertEqual(len(child_marks), forks)
        pids = {e["pid"] for e in child_marks}
        self.assertEqual(len(pids), forks)
        self.assertNotIn(parent, pids)
        # no record of the parent's threads in a child's streams
        self.assertFalse([e for e in events(t, ph="i", name="parent") if e["pid"] in pids])
        for pid in pids:
            files = sorted(os.path.basename(p)
                           for p in glob.glob(r.path("raw", "%d.*" % pid, "*")))
            self.assertEqual(files, ["t%d.raw" % pid], pid)


if __name__ == "__main__":
    unittest.main()
