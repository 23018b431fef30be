"""The terminal behaves as without prof: the program stays in prof's process
group, so the terminal's Ctrl-C, Ctrl-Z and background reads reach the job
as one; prof forwards only the signals sent to prof itself, and dies of the
signal that killed the program, so shells (a loop's Ctrl-C, `jobs`, `$?`)
and CI runners see what they would see without prof.

The terminal cases run a real shell on a pseudo-terminal (ptyterm.py) and
type into it; the rest compare prof's wait status with the program's."""
import json
import os
import re
import resource
import signal
import subprocess
import time
import unittest

from proftest import PROF, PYTHON, ProfTestCase
from ptyterm import PtyTerm, children, proc_report, proc_stat

PROMPT = "PROMPT> "
ROUNDS = 5   # signals in the tests that count them
# Waits for a line, then says what it read; with "count", how many SIGINTs
# reached it. Those are counted by the C-level handler (a wakeup byte each;
# the Python-level one runs once for two that come close together), and
# the wait spins so that each is taken at once: a copy that came while the
# first was still pending would merge with it, unseen.
READER = """import os, signal, sys
count = "count" in sys.argv
if count:
    r, w = os.pipe()
    os.set_blocking(w, False)
    os.set_blocking(r, False)
    signal.set_wakeup_fd(w)
    signal.signal(signal.SIGINT, lambda *a: print("sigint", flush=True))
    os.set_blocking(0, False)
print("ready", flush=True)
line = b""
while not line.endswith(b"\\n"):
    try:
        line += os.read(0, 100)
    except BlockingIOError:
        pass
n = len(os.read(r, 100)) if count else 0
print("got:" + line.decode().strip(), "sigints=%d" % n, flush=True)
"""


class TermCase(ProfTestCase):
    def setUp(self):
        super().setUp()
        self.out = os.path.join(self.tmp, "out")
        self.reader = os.path.join(self.tmp, "reader.py")
        with open(self.reader, "w") as f:
            f.write(READER)
        self.terms = []

    def tearDown(self):
        for t in self.terms:
            t.close()
        super().tearDown()

    def term(self, argv):
        env = dict(os.environ, TERM="dumb", PS1=PROMPT, HISTFILE="/dev/null")
        t = PtyTerm(argv, env=env, cwd=self.tmp)
        self.terms.append(t)
        return t

    def need(self, t, pattern, timeout=30):
        m = t.expect(pattern, timeout)
        if not m:
            self.fail("never printed %r; the terminal shows:\n%s" % (pattern, t.text()))
        return m

    def prof_cmd(self, *cmd):
        return "%s run -o %s --no-parse -- %s" % (PROF, self.out, " ".join(cmd))

    def interactive(self):
        t = self.term(["bash", "--norc", "--noprofile", "-i"])
        self.need(t, PROMPT)
        return t

    def run_info(self):
        (name,) = os.listdir(self.out)
        with open(os.path.join(self.out, name, "profiler_info.json")) as f:
            return json.load(f)


class CtrlC(TermCase):
    def check_loop_stopped(self, shell):
        loop = ('for f in a b c; do %s; echo "after-$f"; done; echo loop-done'
                % self.prof_cmd("sh", "-c", '"echo ready-$f; exec sleep 30"'))
        t = self.term([shell, "-c", loop])
        self.need(t, "ready-a")
        t.send("\x03")
        st = t.wait(30)
        self.assertIsNotNone(st, "the loop did not stop:\n" + t.text())
        self.assertTrue(os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGINT,
                        "%s: wait status %#x\n%s" % (shell, st, t.text()))
        self.assertNotIn("ready-b", t.text())
        self.assertNotIn("after-a", t.text())
        return t

    def test_ctrl_c_stops_bash_loop(self):
        # bash waits for its foreground job and stops the loop only when
        # that job died of SIGINT: prof must, not exit 130.
        t = self.check_loop_stopped("bash")
        self.assertIn("prof: sh killed by signal 2 (SIGINT)", t.text())
        end = self.run_info()["end_info"]   # written before prof died
        self.assertEqual((end["signal"], end["exit_code"]), (signal.SIGINT, None))

    def test_ctrl_c_stops_sh_loop(self):
        self.check_loop_stopped("sh")

    def test_terminal_interrupt_reaches_program_once(self):
        # The terminal delivers Ctrl-C to prof and the program alike: prof
        # must not send it a second time. A copy that comes while the
        # first is still pending merges with it, so several rounds.
        t = self.term([PROF, "run", "-o", self.out, "--no-parse", "--", PYTHON, self.reader,
                       "count"])
        self.need(t, "ready")
        for _ in range(ROUNDS):
            t.send("\x03")
            self.need(t, "sigint")
            t.drain(0.2)   # a forwarded copy would have come by now
        t.send("line\n")
        self.need(t, "got:line sigints=%d" % ROUNDS)
        st = t.wait(30)
        self.assertEqual(st, 0, t.text())


class JobControl(TermCase):
    def wait_job_stopped(self, t, prof):
        """Until prof and its program are both stopped."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            kids = children(prof)
            if kids and all((proc_stat(p) or ["?"])[0] == "T" for p in [prof, kids[0]]):
                return
            time.sleep(0.02)
        self.fail("the job never stopped as a whole:\n" + t.text())

    def test_fg_of_background_prof_reading_stdin(self):
        t = self.interactive()
        t.send(self.prof_cmd(PYTHON, self.reader) + " &\n")
        prof = int(self.need(t, r"\[1\] (\d+)").group(1))
        # The program reads the terminal from the background: the terminal
        # stops its process group, prof included, as one job.
        self.wait_job_stopped(t, prof)
        # bash learns of the stop from its SIGCHLD, a moment later: ask
        # until it tells
        for _ in range(30):
            t.send("jobs\n")
            if t.expect(r"\[1\]\+\s+Stopped", 1):
                break
        else:
            self.fail("bash never saw the job stopped:\n" + t.text())
        t.send("fg\n")
        self.need(t, re.escape(PROF) + " run")   # bash names the job it resumes
        t.send("hello\n")
        self.need(t, "got:hello", timeout=10)
        self.need(t, PROMPT)
        t.send("echo rc=$?\n")
        self.need(t, "rc=0")

    def test_ctrl_z_then_fg(self):
        t = self.interactive()
        t.send(self.prof_cmd(PYTHON, self.reader) + "\n")
        prof = int(self.need(t, r"recording into \S+_(\d+)_\d+_prof").group(1))
        self.need(t, "ready")
        t.send("\x1a")
        # The job stopped as it would without prof: by SIGTSTP, which bash
        # tells in $? (128 + 20), not by a SIGSTOP prof sent itself (147).
        self.need(t, r"\[1\]\+\s+Stopped")
        self.need(t, PROMPT)
        # bash knows prof only: a program slow to take its SIGTSTP could
        # still read what is typed now (as a child of any command could).
        self.wait_job_stopped(t, prof)
        t.send("echo stop=$?\n")
        self.need(t, "stop=%d" % (128 + signal.SIGTSTP))
        t.send("fg\n")
        self.need(t, re.escape(PROF) + " run")
        t.send("again\n")
        self.need(t, "got:again", timeout=10)
        self.need(t, PROMPT)
        t.send("echo rc=$?\n")
        self.need(t, "rc=0")


def wait_status(argv, cwd=None, core=False, new_session=False):
    """The raw wait status of `argv` (a core dump is visible there)."""
    def pre():
        _, hard = resource.getrlimit(resource.RLIMIT_CORE)
        resource.setrlimit(resource.RLIMIT_CORE, (hard if core else 0, hard))
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         preexec_fn=pre, start_new_session=new_session)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    st = os.waitpid(p.pid, 0)[1]
    p.returncode = os.waitstatus_to_exitcode(st)   # reaped here: Popen must not wait
    return st, err


class ExitAsWithoutProf(TermCase):
    SCRIPTS = ["exit 0", "exit 3", "kill -TERM $$", "kill -INT $$", "kill -HUP $$",
               "kill -QUIT $$", "kill -KILL $$", "kill -SEGV $$", "kill -ABRT $$",
               "kill -USR1 $$"]

    def test_statuses_match(self):
        for script in self.SCRIPTS:
            with self.subTest(script):
                bare, _ = wait_status(["sh", "-c", script])
                via, err = wait_status([PROF, "run", "-o", self.out, "--no-parse", "--", "sh",
                                        "-c", script])
                self.assertEqual(via, bare, "%s: %#x with prof, %#x without\n%s"
                                 % (script, via, bare, err))

    def test_no_core_of_prof(self):
        # The program's core is its own affair (here: none, ulimit -c 0);
        # prof, dying of the same SIGSEGV with dumps allowed, writes none.
        if resource.getrlimit(resource.RLIMIT_CORE)[1] == 0:
            self.skipTest("core dumps are off for good here")
        st, err = wait_status([PROF, "run", "-o", self.out, "--no-parse", "--", "sh", "-c",
                               "ulimit -c 0; kill -SEGV $$"], cwd=self.tmp, core=True)
        self.assertTrue(os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGSEGV,
                        "%#x\n%s" % (st, err))
        self.assertFalse(os.WCOREDUMP(st))
        self.assertEqual([f for f in os.listdir(self.tmp) if f.startswith("core")], [])


class Forwarding(TermCase):
    def test_program_signalling_its_group_gets_it_once(self):
        # `kill 0` in the program reaches prof too (one process group): prof
        # must not send it back. prof leads a session of its own here so
        # that the signal stays inside the test.
        prog = ("import os, signal, time\n"
                "r, w = os.pipe()\n"
                "os.set_blocking(w, False)\n"
                "os.set_blocking(r, False)\n"
                "signal.set_wakeup_fd(w)\n"   # a byte for each delivery
                "signal.signal(signal.SIGUSR1, lambda *a: None)\n"
                "for _ in range(%d):\n"
                "    os.kill(0, signal.SIGUSR1)\n"
                "    time.sleep(0.2)\n"
                "raise SystemExit(10 + len(os.read(r, 100)))\n" % ROUNDS)
        st, err = wait_status([PROF, "run", "-o", self.out, "--no-parse", "--", PYTHON, "-c",
                               prog], new_session=True)
        self.assertTrue(os.WIFEXITED(st), "%#x\n%s" % (st, err))
        self.assertEqual(os.WEXITSTATUS(st), 10 + ROUNDS, err)

    def test_waits_for_daemonised_descendant(self):
        # prof is a child subreaper: a descendant in a session of its own
        # is still waited for after the program has ended.
        late = os.path.join(self.tmp, "late")
        prog = ("import os, time\n"
                "if os.fork() == 0:\n"
                "    os.setsid()\n"
                "    time.sleep(0.5)\n"
                "    open(%r, 'w').write('late')\n"
                "    os._exit(0)\n" % late)
        st, err = wait_status([PROF, "run", "-o", self.out, "--no-parse", "--", PYTHON, "-c",
                               prog])
        self.assertEqual(st, 0, err)
        with open(late) as f:   # written before prof ended
            self.assertEqual(f.read(), "late")


# Forks a child that leaves prof's session (a daemon), writes its pid and
# sleeps, ignoring the signals named after the pid file (INT QUIT TERM).
# The parent ends at once.
DAEMON = """import os, signal, sys, time
if os.fork() == 0:
    os.setsid()
    for name in sys.argv[2:]:
        signal.signal(getattr(signal, "SIG" + name), signal.SIG_IGN)
    with open(sys.argv[1], "w") as f:
        f.write(str(os.getpid()))
    for _ in range(600):   # a signal just before a sleep is taken after it
        time.sleep(0.2)
    os._exit(0)
print("parent-done", flush=True)
"""


class LeftRunning(TermCase):
    """CMD ended and left a process running in a session of its own: prof
    waits for it, says so, and the terminal's Ctrl-C (which cannot reach
    that process) gets to it through prof; a second one kills it."""

    def start(self, *extra):
        prog = os.path.join(self.tmp, "daemon.py")
        with open(prog, "w") as f:
            f.write(DAEMON)
        pidfile = os.path.join(self.tmp, "pid")
        t = self.term([PROF, "run", "-o", self.out, "--", PYTHON, prog, pidfile] + list(extra))
        self.need(t, "parent-done")
        m = self.need(t, r"prof: \S+ ended \(exit status 0\) and left 1 process running: "
                      r"pid (\d+) \(python3\)\. prof waits for it, .*Ctrl-C", 20)
        with open(pidfile) as f:
            pid = int(f.read())
        self.assertEqual(int(m.group(1)), pid)
        return t, pid

    def gone(self, pid):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return (proc_stat(pid) or ["Z"])[0] == "Z"

    def test_ctrl_c_reaches_a_daemon(self):
        t, pid = self.start()
        t.send("\x03")
        self.need(t, r"prof: note \(pid %d\): prof waited \d+\.\d s after \S+ ended for the "
                  r"processes it left running \(the first: python3\)" % pid)
        st = t.wait(30)
        self.assertEqual(st, 0, t.text())    # CMD's status, not the daemon's
        self.assertTrue(self.gone(pid))
        self.assertNotIn("killing", t.text())
        notes = [n["text"] for n in self.run_info()["end_info"]["notices"]]
        self.assertTrue(any(n.startswith("prof waited") for n in notes), notes)

    def test_sigterm_where_sigint_is_ignored(self):
        # a shell script's `cmd &` ignores SIGINT: it gets SIGTERM instead
        t, pid = self.start("INT")
        t.send("\x03")
        self.need(t, r"prof: pid %d \(python3\) ignores SIGINT: sent it SIGTERM" % pid)
        st = t.wait(30)
        self.assertEqual(st, 0, t.text())
        self.assertTrue(self.gone(pid))
        self.assertNotIn("killing", t.text())

    def test_second_ctrl_c_kills(self):
        t, pid = self.start("INT", "QUIT", "TERM")
        t.send("\x03")
        self.need(t, r"ignores SIGINT: sent it SIGTERM")
        t.drain(0.5)
        self.assertFalse(self.gone(pid), "a deaf daemon died of the first Ctrl-C")
        t.send("\x1c")   # Ctrl-\\ counts as well
        self.need(t, r"prof: killing what \S+ left running: pid %d \(python3\)" % pid)
        st = t.wait(30)
        self.assertEqual(st, 0, t.text())
        self.assertTrue(self.gone(pid))

    def test_kill_int_twice_without_terminal(self):
        # As in CI: no terminal, prof's stderr a pipe; `kill -INT` to prof
        # is passed on, and a second one kills what is left.
        prog = os.path.join(self.tmp, "daemon.py")
        with open(prog, "w") as f:
            f.write(DAEMON)
        pidfile = os.path.join(self.tmp, "pid")
        p = subprocess.Popen([PROF, "run", "-o", self.out, "--no-parse", "--", PYTHON, prog,
                              pidfile, "INT", "QUIT", "TERM"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             start_new_session=True, text=True)
        try:
            err = ""
            while "and left 1 process running" not in err:
                line = p.stderr.readline()
                self.assertTrue(line, "prof never said what it waits for:\n" + err)
                err += line
            self.assertIn("kill -INT %d" % p.pid, err)
            with open(pidfile) as f:
                pid = int(f.read())
            os.kill(p.pid, signal.SIGINT)
            time.sleep(0.5)
            self.assertFalse(self.gone(pid), "a deaf daemon died of the first SIGINT")
            os.kill(p.pid, signal.SIGINT)
            err += p.stderr.read()
            self.assertEqual(p.wait(30), 0, err)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            p.stderr.close()
        self.assertIn("prof: killing what", err)
        self.assertTrue(self.gone(pid))

    def test_setsid_cmd_gets_ctrl_c(self):
        # `prof run -- setsid CMD`: the terminal cannot reach CMD, prof can.
        # Short sleeps: Python takes a signal that comes between its last
        # check and a sleep's start only when that sleep ends (after
        # "ready" is printed, under load, with or without prof).
        t = self.term([PROF, "run", "-o", self.out, "--no-parse", "--", "setsid", PYTHON, "-c",
                       "import time\nprint('ready', flush=True)\n"
                       "for _ in range(600): time.sleep(0.1)"])
        self.need(t, "ready")
        t.send("\x03")
        st = t.wait(30)
        self.assertIsNotNone(st, "Ctrl-C did not reach CMD:\n%s\n%s"
                             % (t.text(), proc_report(t.pid)))
        self.assertTrue(os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGINT,
                        "wait status %#x\n%s" % (st, t.text()))


if __name__ == "__main__":
    unittest.main()
