"""prof.paddle (paddle.profiler's interface) on a small PyTorch loop, under
`prof run` and in a plain python: the seed's schedules give exactly their
steps per window and per result directory, summary() prints paddle's views
with the real operators, step_info() numbers, export, bad input. Skipped
when /usr/bin/python3 cannot import torch (except the bad-input cases)."""
import csv
import glob
import importlib
import json
import os
import re
import subprocess
import sys
import unittest

from proftest import PROF, PYTHON, ProfTestCase, plain_python_env
from test_torch_steps import needs_torch

PYDIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(PROF))), "share", "prof",
                     "python")

# The loop: paddle's step k (from 0) is prof's step k + 1. Each step sleeps
# 10 ms so that batch_cost's five decimals are precise to 0.1 %, and each
# sample takes 1 ms to load, so reader_cost is measurable.
SCRIPT = r'''
import json, os, sys, time
import torch
import prof.paddle as profiler

mode, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
torch.set_num_threads(1)

class Slow(torch.utils.data.Dataset):
    def __len__(self):
        return 48
    def __getitem__(self, i):
        time.sleep(0.001)
        return torch.randn(8)

loader = torch.utils.data.DataLoader(Slow(), batch_size=4)
model = torch.nn.Linear(8, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
windows = []

def export_each(p):
    windows.append(p.step_num)
    p.export(os.path.join(out, "window%d.json" % len(windows)))

kw = {}
if mode == "tuple":
    kw = dict(scheduler=(2, 5), on_trace_ready=profiler.export_chrome_tracing(out))
elif mode == "make":
    kw = dict(scheduler=profiler.make_scheduler(closed=1, ready=1, record=2, repeat=2),
              on_trace_ready=profiler.export_chrome_tracing(out, worker_name="w"))
elif mode == "custom":
    kw = dict(scheduler=profiler.make_scheduler(closed=1, ready=1, record=2, repeat=2),
              on_trace_ready=export_each)
elif mode == "timer":
    kw = dict(timer_only=True)
with profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], **kw) as p:
    for i, x in enumerate(loader):
        with profiler.RecordEvent("my_record_event"):
            loss = model(x).sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
        time.sleep(0.01)
        p.step(num_samples=4)
        if i == 5:
            print("STEP_INFO" + p.step_info(unit="images"), flush=True)
print("WINDOWS %s" % json.dumps(windows), flush=True)
if mode == "make":
    p.summary(sorted_by=profiler.SortedKeys.CPUTotal, op_detail=True, time_unit="us")
    p.export(os.path.join(out, "last.json"))
    try:
        p.export(os.path.join(out, "last.pb"), format="pb")
    except ValueError as e:
        print("PB_ERROR %s" % e)
'''


def result_dirs(out):
    """The window results in out (in a plain python the run directory is
    made there too: it has no window)."""
    found = []
    for d in sorted(glob.glob(os.path.join(out, "*_prof"))):
        with open(os.path.join(d, "profiler_info.json")) as f:
            if "window" in json.load(f):
                found.append(d)
    return found


def result_steps(result_dir):
    """The steps of a result directory's step_trace_time.csv."""
    with open(os.path.join(result_dir, "PROFILER_OUTPUT", "step_trace_time.csv"),
              newline="") as f:
        return [int(r["Step"]) for r in csv.DictReader(f)]


def window_steps(result_dir):
    with open(os.path.join(result_dir, "profiler_info.json")) as f:
        return json.load(f)["window"]["steps"]


def trace_steps(path):
    with open(path) as f:
        trace = json.load(f)
    return sorted(int(e["name"].split("#")[1]) for e in trace["traceEvents"]
                  if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))


class InScript(ProfTestCase):
    """Runs a script that profiles itself, in a plain python or under prof run."""

    def write_script(self, text, name="script.py"):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def run_script(self, text, *args, under_prof=False):
        script = self.write_script(text)
        if under_prof:
            run = self.prof_run([PYTHON, script, *args], out=os.path.join(self.tmp, "run"))
            self.assertEqual(run.rc, 0, run.stdout + run.stderr)
            self.assertParsedClean(run)
            return run.stdout, run.stderr
        env = {k: v for k, v in plain_python_env(PYDIR).items() if not k.startswith("PROF_")}
        p = subprocess.run([PYTHON, script, *args], capture_output=True, text=True, env=env,
                           cwd=self.tmp, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return p.stdout, p.stderr


class Schedules:
    UNDER_PROF = False

    def run_mode(self, mode):
        out = os.path.join(self.tmp, "out")
        stdout, stderr = self.run_script(SCRIPT, mode, out, under_prof=self.UNDER_PROF)
        return out, stdout, stderr

    def test_tuple_records_steps_start_to_end(self):
        # (2, 5): paddle's steps 2, 3, 4 record (prof's 3, 4, 5), one window
        out, _, _ = self.run_mode("tuple")
        dirs = result_dirs(out)
        self.assertEqual(len(dirs), 1, dirs)
        self.assertEqual(result_steps(dirs[0]), [3, 4, 5])
        self.assertEqual(window_steps(dirs[0]), [3, 5])

    def test_make_scheduler_two_cycles_and_summary(self):
        # closed=1, ready=1, record=2, repeat=2: paddle's steps 2-3 and 6-7
        out, stdout, _ = self.run_mode("make")
        dirs = result_dirs(out)
        self.assertEqual(len(dirs), 2, dirs)
        self.assertTrue(all(os.path.basename(d).startswith("w_") for d in dirs), dirs)
        self.assertEqual(sorted(result_steps(d) for d in dirs), [[3, 4], [7, 8]])
        for title in ("Device Summary", "Overview Summary", "Model Summary",
                      "Distribution Summary", "Operator Summary", "Kernel Summary",
                      "Memory Manipulation Summary", "UserDefined Summary"):
            self.assertIn(title, stdout)
        self.assertIn("Time unit: us", stdout)
        ops = stdout[stdout.index("Operator Summary"):stdout.index("Kernel Summary")]
        self.assertRegex(ops, r"\naten::linear +2 ")       # the last window's 2 steps
        self.assertRegex(ops, r"\n  aten::addmm +2 ")      # op_detail: what linear called
        user = stdout[stdout.index("UserDefined Summary"):]
        self.assertRegex(user, r"\nmy_record_event +2 ")
        model = stdout[stdout.index("Model Summary"):stdout.index("Distribution Summary")]
        self.assertRegex(model, r"\nProfileStep +2 ")
        # export(): the last window's trace; "pb" refused
        self.assertEqual(trace_steps(os.path.join(out, "last.json")), [7, 8])
        self.assertIn("PB_ERROR prof.paddle.Profiler.export: format: \"pb\"", stdout)
        self.assertIn("Perf Summary", stdout)   # 12 steps: 2 past paddle's 10 skipped

    def test_export_in_handler_gets_each_window(self):
        out, stdout, _ = self.run_mode("custom")
        self.assertIn("WINDOWS [4, 8]", stdout)   # on_trace_ready after paddle's steps 3, 7
        self.assertEqual(trace_steps(os.path.join(out, "window1.json")), [3, 4])
        self.assertEqual(trace_steps(os.path.join(out, "window2.json")), [7, 8])


@needs_torch
class PlainPython(InScript, Schedules):
    def test_timer_only_step_info(self):
        out = os.path.join(self.tmp, "out")
        stdout, stderr = self.run_script(SCRIPT, "timer", out)
        m = re.search(r"STEP_INFO reader_cost: ([0-9.]+) s batch_cost: ([0-9.]+) s "
                      r"ips: ([0-9.]+) images/s\n", stdout)
        self.assertTrue(m, stdout)
        reader, batch, ips = (float(v) for v in m.groups())
        self.assertGreater(reader, 0.0035)        # 4 samples of >= 1 ms each
        self.assertGreater(batch, 0.01 + reader)   # + the 10 ms sleep
        self.assertAlmostEqual(ips, 4 / batch, delta=ips * 0.002)
        self.assertIn("Perf Summary", stdout)
        self.assertRegex(stdout, r"\| +batch_cost +\| +[0-9.]+ +\|")
        # timer_only records nothing: no prof session, no run directory
        self.assertFalse(glob.glob(os.path.join(self.tmp, "*", "*_prof")), os.listdir(self.tmp))
        self.assertNotIn("prof: recording into", stderr)


@needs_torch
class UnderProfRun(InScript, Schedules):
    UNDER_PROF = True


# One 1 ms kernel of the simulated device per step, launched inside a
# RecordEvent (the device is found under prof run: the library injects
# itself when loaded).
SIM_SCRIPT = r'''
import ctypes, sys
import prof.paddle as profiler
lib = ctypes.CDLL(sys.argv[1])
lib.prof_sim_stream_create.restype = ctypes.c_void_p
lib.prof_sim_kernel.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64]
lib.prof_sim_stream_sync.argtypes = [ctypes.c_void_p]
stream = lib.prof_sim_stream_create(0)
with profiler.Profiler(scheduler=(2, 4),
                       on_trace_ready=profiler.export_chrome_tracing(sys.argv[2])) as p:
    for i in range(5):
        with profiler.RecordEvent("launch"):
            lib.prof_sim_kernel(stream, b"py_k", 1000000)
            lib.prof_sim_stream_sync(stream)
        p.step()
p.summary(sorted_by=profiler.SortedKeys.GPUTotal)
'''
SIM_LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(PROF))), "lib",
                       "libprof_sim.so")


@unittest.skipUnless(os.path.exists(SIM_LIB), "no simulated device library (%s)" % SIM_LIB)
class DeviceViews(InScript):
    def test_kernels_and_their_device_time(self):
        out = os.path.join(self.tmp, "out")
        stdout, _ = self.run_script(SIM_SCRIPT, SIM_LIB, out, under_prof=True)
        self.assertEqual([result_steps(d) for d in result_dirs(out)], [[3, 4]])
        five = r" +([0-9.]+) / [0-9.]+ / [0-9.]+ / [0-9.]+ / [0-9.]+"
        kernels = stdout[stdout.index("Kernel Summary"):]
        m = re.search(r"\npy_k +2" + five, kernels)
        self.assertTrue(m, kernels)
        self.assertGreaterEqual(float(m.group(1)), 2.0)     # ms: 2 kernels of >= 1 ms
        m = re.search(r"\nlaunch +2" + five + five, stdout[stdout.index("UserDefined"):])
        self.assertTrue(m, stdout)
        self.assertGreaterEqual(float(m.group(2)), 2.0)     # what the range launched
        model = stdout[stdout.index("Model Summary"):]
        m = re.search(r"\nProfileStep +2" + five + five, model)
        self.assertGreaterEqual(float(m.group(2)), 2.0)
        self.assertRegex(stdout, r"\nGPU0 +[0-9.]+")


def prof_module(name):
    """A module of the prof package, imported into the test's own process
    (for what is checked before anything starts)."""
    if PYDIR not in sys.path:
        sys.path.insert(0, PYDIR)
    return importlib.import_module(name)


class BadInput(unittest.TestCase):
    def setUp(self):
        self.P = prof_module("prof.paddle")

    def assertNames(self, fn, what):
        with self.assertRaises(ValueError) as c:
            fn()
        self.assertIn(what, str(c.exception))

    def test_scheduler(self):
        P = self.P
        self.assertNames(lambda: P.Profiler(scheduler="2,5", timer_only=True), "scheduler:")
        self.assertNames(lambda: P.Profiler(scheduler=(5, 2), timer_only=True), "scheduler:")
        self.assertNames(lambda: P.Profiler(scheduler=(1, 2, 3), timer_only=True),
                         "scheduler:")
        self.assertNames(lambda: P.Profiler(scheduler=lambda s: P.ProfilerState.RECORD,
                                            timer_only=True), "scheduler:")
        self.assertNames(lambda: P.make_scheduler(closed=1, ready=1, record=0), "record:")
        self.assertNames(lambda: P.make_scheduler(closed=-1, ready=1, record=1), "closed:")
        self.assertNames(lambda: P.make_scheduler(closed=1, ready="1", record=1), "ready:")
        self.assertNames(lambda: P.Profiler(targets=["CPU"], timer_only=True), "targets:")

    def test_make_scheduler_states(self):
        P = self.P
        s = P.make_scheduler(closed=1, ready=2, record=3, repeat=1)   # the seed's example 1
        S = P.ProfilerState
        self.assertEqual([s(i) for i in range(8)],
                         [S.CLOSED, S.READY, S.READY, S.RECORD, S.RECORD,
                          S.RECORD_AND_RETURN, S.CLOSED, S.CLOSED])
        self.assertEqual(s.spec(), "0,1,2,3,1")

    def test_summary_arguments(self):
        p = self.P.Profiler(timer_only=True)
        self.assertNames(lambda: p.summary(sorted_by="CPUTotal"), "sorted_by:")
        self.assertNames(lambda: p.summary(time_unit="min"), "time_unit:")
        self.assertNames(lambda: p.export("x.json", format="xml"), "format:")
        with self.assertRaises(RuntimeError):
            p.summary()   # timer_only recorded no trace


if __name__ == "__main__":
    unittest.main()
