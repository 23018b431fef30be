"""prof on programs written the way PyTorch users write them, beside
training loops (test_real_programs.py): inference with DataLoader workers,
a loop on a thread of its own, Hogwild workers, launch scripts that
replace LD_PRELOAD or the environment, and a model trained by hand with no
optimizer. What is checked is what a user meets first: the program's
output and status unchanged, the operators there, steps right, and
anything prof could not do said at the end of the run."""
import collections
import glob
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from proftest import PROF, PYTHON, events, workload  # noqa: E402
from realprog import WORKLOADS, RealProgram, have  # noqa: E402


@unittest.skipUnless(have("torchvision"), "needs torchvision (python3-torchvision)")
class Inference(RealProgram):
    """A model served, not trained: no optimizer, batch or backward says
    where the loop begins, so its first module call does; no steps are
    seen, and the user hears it."""
    BATCHES = 4

    def test_operators_and_no_steps_said(self):
        run, notes = self.run_unchanged(
            PYTHON, os.path.join(WORKLOADS, "torch_inference.py"), str(self.BATCHES))
        self.assertEqual(len(notes), 1, run.stderr)
        self.assertIn("no steps were seen: this process never stepped a torch.optim optimizer "
                      "(inference?), and its loop began at the first nn.Module call", notes[0])
        self.assertIn("prof_tx.step()", notes[0])
        # every forward's operators, the first one's included: ResNet-18
        # has 20 convolutions and one fully connected layer
        t = run.trace()
        self.assertEqual(len(events(t, ph="X", cat="cpu_op", name="aten::conv2d")),
                         20 * self.BATCHES)
        self.assertEqual(len(events(t, ph="X", cat="cpu_op", name="aten::linear")), self.BATCHES)
        self.assertFalse([e for e in events(t, ph="X") if e["name"].startswith("ProfilerStep#")])

    def test_batches_from_workers(self):
        """The workers, forked before the loop began, run transforms that are
        modules: they collect nothing and are not told of steps."""
        run, notes = self.run_unchanged(
            PYTHON, os.path.join(WORKLOADS, "torch_inference.py"), str(self.BATCHES), "2")
        self.assertEqual(len(notes), 1, run.stderr)
        self.assertIn("its loop began at the first DataLoader batch", notes[0])
        t = run.trace()
        names = {e["pid"]: e["args"]["name"] for e in events(t, ph="M", name="process_name")}
        workers = [p for p, n in names.items() if n.startswith("DataLoader worker")]
        self.assertEqual(len(workers), 2, names)
        self.assertIn("(pid %d)" % [p for p, n in names.items() if n != "Host"
                                    and p not in workers][0], notes[0])
        ops = events(t, ph="X", cat="cpu_op")
        self.assertFalse([e for e in ops if e["pid"] in workers])
        self.assertEqual(len([e for e in ops if e["name"] == "aten::conv2d"]), 20 * self.BATCHES)
        fetches = [e for e in events(t, ph="X", name="DataLoader fetch") if e["pid"] in workers]
        self.assertEqual(len(fetches), self.BATCHES)


class ThreadLoop(RealProgram):
    """The loop in a thread of its own: only that thread can stop torch's
    collection, so its last operators (after the flushes of steps 10 and
    20) are sent as it ends, and torch has no session left to complain of
    at exit."""
    STEPS = 25

    def test_last_operators_of_a_thread(self):
        run, notes = self.run_unchanged(
            PYTHON, os.path.join(WORKLOADS, "torch_thread_loop.py"), str(self.STEPS))
        self.assertEqual(notes, [])
        self.assertNotIn("Leaked callback", run.stderr)
        t = run.trace()
        self.assertEqual(len(events(t, ph="X", cat="cpu_op", name="aten::addmm")), self.STEPS)
        steps = [e for e in events(t, ph="X") if e["name"].startswith("ProfilerStep#")]
        self.assertEqual(len(steps), self.STEPS)


class Hogwild(RealProgram):
    """pytorch/examples' mnist_hogwild: forked workers without a rank each
    train the shared model; the parent only evaluates. The workers' step
    rows are told apart by pid, and the parent, which never stepped, is
    not told to mark steps that its workers had."""
    WORKERS, STEPS = 2, 5

    def test_workers_rows_by_pid(self):
        run, notes = self.run_unchanged(
            PYTHON, os.path.join(WORKLOADS, "torch_hogwild.py"), str(self.WORKERS),
            str(self.STEPS))
        self.assertEqual(len(notes), 1, run.stderr)
        self.assertIn("2 processes without a rank stepped: step_trace_time.csv's Pid column",
                      notes[0])
        self.assertNotIn("no steps were seen", run.stderr)
        self.assertIn("10 steps: 5 on each of 2 processes", run.stderr)
        rows = run.csv_rows("step_trace_time.csv")
        self.assertEqual(rows[0][-1], "Pid")
        by_pid = collections.Counter(r[-1] for r in rows[1:])
        self.assertEqual(sorted(by_pid.values()), [self.STEPS] * self.WORKERS, by_pid)
        # each worker's steps are its own ProfilerStep#s in the trace
        steps = [e for e in events(run.trace(), ph="X") if e["name"].startswith("ProfilerStep#")]
        self.assertEqual(collections.Counter(str(e["pid"]) for e in steps), by_pid)
        st = subprocess.run([PROF, "stats", "--view", "steps", "--format", "json", run.run_dir],
                            capture_output=True, text=True, timeout=60)
        self.assertEqual(st.returncode, 0, st.stderr)
        self.assertEqual(collections.Counter(str(r["pid"]) for r in json.loads(st.stdout)["steps"]),
                         by_pid)
        ov = subprocess.run([PROF, "stats", run.run_dir], capture_output=True, text=True,
                            timeout=60)
        self.assertIn("Steps: %d " % self.STEPS, ov.stdout)
        self.assertNotIn("Note:", ov.stdout)


class LaunchScript(RealProgram):
    """Training repositories start their script from a shell script that
    sets PYTHONPATH itself (`export PYTHONPATH=$PWD`), which drops the
    directory prof put first for its hooks: the agent puts it back, the
    script's own entries kept. What it cannot mend (python -I ignores
    PYTHONPATH) is said, not left to read as a program without steps."""
    STEPS = 5

    def test_spawned_with_ld_preload_replaced(self):
        """A program that replaces LD_PRELOAD, then starts children through
        subprocess (vfork and execve) and os.posix_spawn: each child is
        recorded, the program's library loaded too."""
        driver = os.path.join(self.tmp, "driver.py")
        with open(driver, "w") as f:
            f.write("import os, subprocess, sys\n"
                    "os.environ['LD_PRELOAD'] = 'libm.so.6'\n"
                    "subprocess.run([sys.argv[1], '3', '1'], check=True)\n"
                    "pid = os.posix_spawn(sys.argv[1], [sys.argv[1], '4', '1'], os.environ)\n"
                    "assert os.waitpid(pid, 0)[1] == 0\n"
                    "print(subprocess.run(['sh', '-c', 'grep -c libm.so.6 /proc/$$/maps'],\n"
                    "                     capture_output=True, text=True).stdout.strip() != '0')\n")
        # not compared with a bare run: a sanitized tx_steps refuses an
        # LD_PRELOAD without its runtime first, which prof's put-back has
        run = self.prof_run("--", PYTHON, driver, workload("tx_steps"))
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertEqual(run.stdout, "tx_steps: 3 steps\ntx_steps: 4 steps\nTrue\n")
        self.assertIn("7 steps: 3-4 on each of 2 processes", run.stderr)

    def test_exec_forms_with_ld_preload_replaced(self):
        """execl, execlp, execle, execv, execvp after setenv("LD_PRELOAD"):
        each child recorded (1..5 steps)."""
        run = self.prof_run("--", workload("exec_preload"), workload("tx_steps"))
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertIn("exec_preload: 5 children", run.stdout)
        self.assertIn("15 steps: 1-5 on each of 5 processes", run.stderr)

    def test_fresh_environment_is_said(self):
        """A subprocess given an environment of its own (no PROF_AGENT_*) is
        left alone, as asked, and said: not left to pass for recorded."""
        tx = workload("tx_steps")
        # ctypes.util runs /sbin/ldconfig with an environment of its own: a
        # system tool, no part of the work, not said
        code = ("import ctypes.util, os, subprocess, sys\n"
                "ctypes.util.find_library('m')\n"
                "subprocess.run([%r, '2', '1'], env={'PATH': os.environ['PATH']}, check=True)\n"
                "subprocess.run(['env', '-i', sys.executable, '-c', ''], check=True)\n"
                "subprocess.run(['env', '-i', 'true'], check=True)\n"
                "subprocess.run([%r, '3', '1'], check=True)\n" % (tx, tx))
        run = self.prof_run("--", PYTHON, "-c", code)
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertIn("3 steps", run.stderr)   # the third, given prof's environment
        notes = [ln for ln in run.stderr.splitlines() if ln.startswith("prof: note")]
        self.assertEqual(len(notes), 1, run.stderr)
        self.assertIn("%s was started with an environment of its own, without prof's "
                      "variables" % tx, notes[0])
        self.assertIn("nor 1 other program started so", notes[0])
        st = subprocess.run([PROF, "stats", run.run_dir], capture_output=True, text=True,
                            timeout=60)
        self.assertIn("without prof's variables", st.stdout)

    def test_pythonpath_set_by_a_launch_script(self):
        lib = os.path.join(self.tmp, "lib")
        os.makedirs(lib)
        with open(os.path.join(lib, "loopconf.py"), "w") as f:
            f.write("STEPS = %d\n" % self.STEPS)
        script = os.path.join(self.tmp, "train.py")
        with open(script, "w") as f:
            f.write("import sys, runpy, loopconf\n"
                    "sys.argv = ['loop', str(loopconf.STEPS)]\n"
                    "runpy.run_path(%r, run_name='__main__')\n"
                    % os.path.join(WORKLOADS, "torch_thread_loop.py"))
        # and an allocator preloaded as training scripts do (tcmalloc,
        # jemalloc): the library kept, the agent put back
        run, notes = self.run_unchanged(
            "sh", "-c", 'export PYTHONPATH="$1" LD_PRELOAD=libm.so.6; exec "$2" "$3"', "sh",
            lib, PYTHON, script)
        self.assertEqual(notes, [])
        self.assertIn("%d steps" % self.STEPS, run.stderr)
        self.assertIn("thread loop: %d steps" % self.STEPS, run.stdout)
        ops = events(run.trace(), ph="X", cat="cpu_op", name="aten::addmm")
        self.assertEqual(len(ops), self.STEPS)
        logs = ""
        for path in glob.glob(os.path.join(run.run_dir, "logs", "agent-*.log")):
            with open(path) as f:
                logs += f.read()
        self.assertIn("PYTHONPATH (%s) lacked prof's Python directory" % lib, logs)

    def test_isolated_python_is_said(self):
        run, notes = self.run_unchanged(
            PYTHON, "-I", os.path.join(WORKLOADS, "torch_thread_loop.py"), str(self.STEPS))
        self.assertEqual(len(notes), 1, run.stderr)
        self.assertIn("imported torch without prof's Python hooks", notes[0])
        self.assertIn("python -I, -E or -S", notes[0])


class ManualSgd(RealProgram):
    def test_no_optimizer_is_said(self):
        run, notes = self.run_unchanged(PYTHON, os.path.join(WORKLOADS, "torch_manual_sgd.py"),
                                        "6")
        self.assertEqual(len(notes), 1, run.stderr)
        self.assertIn("no steps were seen: backward() ran 6 times", notes[0])
        self.assertIn("prof_tx.step()", notes[0])
        st = subprocess.run([PROF, "stats", run.run_dir], capture_output=True, text=True,
                            timeout=60)
        self.assertIn("Steps: none were seen", st.stdout)
        self.assertNotIn("average 0.000", st.stdout)
        self.assertIn("Note: no steps were seen", st.stdout)
        # the operators of the hand-written loop are there all the same
        ops = events(run.trace(), ph="X", cat="cpu_op", name="aten::mm")
        self.assertGreaterEqual(len(ops), 6)


if __name__ == "__main__":
    unittest.main()
