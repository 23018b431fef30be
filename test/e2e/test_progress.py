"""prof parse's progress bar: drawn on a terminal (a pty here), erased at
the end; when standard error is not a terminal, a line every 30 s
instead; never with -q.
PROF_PROGRESS_AFTER=0 draws from the start, so a small synthetic run
(test/bench/gen_raw, 100k events: about a dozen redraws) is enough."""
import os
import pty
import select
import subprocess
import unittest

from proftest import BUILD, PROF, ProfTestCase

GEN = os.path.join(BUILD, "test", "bench", "gen_raw")


def on_pty(argv, env):
    """argv's exit status and everything it wrote to its standard error,
    which is a terminal."""
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=slave, env=env)
    os.close(slave)
    out = b""
    while True:
        r, _, _ = select.select([master], [], [], 60)
        if not r:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:      # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(timeout=120), out.decode("utf-8", "replace")


class ProgressTest(ProfTestCase):
    def setUp(self):
        super().setUp()
        self.run_dir = os.path.join(self.tmp, "run")
        g = subprocess.run([GEN, self.run_dir, "100000"], capture_output=True, text=True)
        self.assertEqual(g.returncode, 0, g.stderr)
        self.env = dict(os.environ, PROF_PROGRESS_AFTER="0")

    def test_terminal(self):
        rc, err = on_pty([PROF, "parse", self.run_dir], self.env)
        self.assertEqual(rc, 0, err)
        bars = [s for s in err.split("\r") if s.startswith("prof parse: [")]
        self.assertGreater(len(bars), 2, err)
        pcts = [int(b.split("]")[1].strip().rstrip("%")) for b in bars]
        self.assertEqual(pcts, sorted(pcts))          # it only goes forward
        self.assertTrue(all(0 <= p <= 100 for p in pcts), pcts)
        # erased once done: after the last bar, the line is cleared
        self.assertIn("\r\x1b[K", err[err.rindex("prof parse: ["):])

    def test_quiet_terminal(self):
        rc, err = on_pty([PROF, "parse", "-q", self.run_dir], self.env)
        self.assertEqual(rc, 0, err)
        self.assertNotIn("[#", err)
        self.assertNotIn("\r", err.replace("\r\n", "\n"))

    def test_not_a_terminal(self):
        # no bar: a line now and then (every 30 s, the first after
        # PROF_PROGRESS_AFTER here), so that a CI log shows a long parse going
        p = subprocess.run([PROF, "parse", self.run_dir], capture_output=True, text=True,
                           env=self.env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("\r", p.stderr)
        self.assertNotIn("[#", p.stderr)
        lines = [ln for ln in p.stderr.splitlines() if "of the run's time read, after" in ln]
        self.assertEqual(len(lines), 1, p.stderr)   # the next would come 30 s later
        self.assertRegex(lines[0], r"^prof parse: \d+% of the run's time read, after \d+ s$")
        q = subprocess.run([PROF, "parse", "-q", self.run_dir], capture_output=True, text=True,
                           env=self.env, timeout=120)
        self.assertNotIn("of the run's time read", q.stderr)
        default = dict(self.env)
        default.pop("PROF_PROGRESS_AFTER")
        q = subprocess.run([PROF, "parse", self.run_dir], capture_output=True, text=True,
                           env=default, timeout=120)
        self.assertNotIn("of the run's time read", q.stderr)   # a short parse: none


if __name__ == "__main__":
    unittest.main()
