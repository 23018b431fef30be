"""What test_real_programs.py and test_real_scripts.py share: programs
written the way PyTorch users write them, run under prof and bare."""
import os
import subprocess

from proftest import PROF, PYTHON, SRC, ProfTestCase, Run

WORKLOADS = os.path.join(SRC, "test", "workloads")


def have(module):
    return subprocess.run([PYTHON, "-c", "import " + module], capture_output=True).returncode == 0


class RealProgram(ProfTestCase):
    def prof_run(self, *args):
        out = os.path.join(self.tmp, "out")
        proc = subprocess.run([PROF, "run", "-o", out, *args], capture_output=True, text=True,
                              timeout=240)
        return Run(proc, out)

    def bare(self, *cmd):
        return subprocess.run(list(cmd), capture_output=True, text=True, timeout=240)

    def run_unchanged(self, *cmd):
        """cmd under prof: its status and output as without prof; the run
        and prof's notes at its end."""
        run = self.prof_run("--", *cmd)
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertEqual(run.stdout, self.bare(*cmd).stdout)
        return run, [ln for ln in run.stderr.splitlines() if ln.startswith("prof: note")]
