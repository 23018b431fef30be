"""prof.mindspore (mindspore.Profiler's interface) on a small PyTorch loop,
under `prof run` and in a plain python: start()/stop() at given steps give
exactly those steps in analyse()'s result, op_analyse's JSON, the
RuntimeErrors the seed lists, offline_analyse, a program without steps,
bad input. Skipped when /usr/bin/python3 cannot import torch (except the
cases without it)."""
import json
import os
import unittest

from test_paddle_style import InScript, prof_module, result_steps, window_steps
from test_torch_steps import needs_torch

# The seed's StopAtStep callback, in a loop: MindSpore's cur_step_num counts
# from 1, as prof's steps do. The Profiler comes before the optimizer, as
# the seed builds it before model.train: prof's hooks see the optimizer.
SCRIPT = r'''
import json, sys
import torch
from prof.mindspore import Profiler

out = sys.argv[1]
torch.set_num_threads(1)
p = Profiler(output_path=out, start_profile=False, l2_cache=True, aicore_metrics=1)
model = torch.nn.Linear(8, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)

def error(fn):
    try:
        fn()
    except (RuntimeError, TypeError) as e:
        return "%s: %s" % (type(e).__name__, e)
    return "none"

print("STOP_BEFORE_START " + error(p.stop))
for step in range(1, 11):
    if step == 3:
        p.start()
        print("START_TWICE " + error(p.start))
    loss = model(torch.randn(2, 8)).sum()
    loss.backward()
    opt.step()
    opt.zero_grad()
    if step == 6:
        p.stop()
print("START_AFTER_STOP " + error(p.start))
p.analyse()
print("OP " + p.op_analyse("aten::addmm"))
print("OPS " + p.op_analyse(["aten::linear", "aten::t"], device_id=0))
print("MISSING " + error(lambda: p.op_analyse("NoSuchOp")))
print("BAD_NAME " + error(lambda: p.op_analyse(3)))
print("BAD_DEVICE " + error(lambda: p.op_analyse("aten::addmm", device_id="0")))
'''

OFFLINE = r'''
import sys
import torch
from prof.mindspore import Profiler

p = Profiler(output_path=sys.argv[1])
model = torch.nn.Linear(8, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    model(torch.randn(2, 8)).sum().backward()
    opt.step()
p.stop()
'''

NO_STEPS = r'''
import sys, time
import prof_tx
from prof.mindspore import Profiler

p = Profiler(output_path=sys.argv[1])
for i in range(3):
    with prof_tx.range("infer%d" % i):
        time.sleep(0.002)
p.analyse()
'''


def lines(stdout, key):
    return [l[len(key) + 1:] for l in stdout.splitlines() if l.startswith(key + " ")]


class StartStop:
    UNDER_PROF = False

    def test_start_stop_steps_and_op_analyse(self):
        out = os.path.join(self.tmp, "data")
        stdout, stderr = self.run_script(SCRIPT, out, under_prof=self.UNDER_PROF)
        result = os.path.join(out, "profiler")
        self.assertEqual(result_steps(result), [3, 4, 5, 6])
        self.assertEqual(window_steps(result), [3, 6])
        self.assertIn("prof: analyse: steps 3-6 in %s" % result, stderr)
        # the seed's RuntimeErrors, in MindSpore's words
        self.assertEqual(lines(stdout, "STOP_BEFORE_START"),
                         ["RuntimeError: The profiler has not started, so can not stop. Please "
                          "call the start() method before calling the stop() method."])
        self.assertTrue(lines(stdout, "START_TWICE")[0].startswith(
            "RuntimeError: The profiler has already started."), stdout)
        self.assertTrue(lines(stdout, "START_AFTER_STOP")[0].startswith(
            "RuntimeError: MindSpore Profiling has finished"), stdout)
        # Ascend-only keys: said, not applied
        self.assertIn("prof: l2_cache: not applied (", stderr)
        self.assertIn("prof: aicore_metrics: not applied (", stderr)
        # op_analyse: MindSpore's JSON, one addmm per step
        op = json.loads(lines(stdout, "OP")[0])
        self.assertEqual(op["device_id"], 0)
        (entry,) = op["aten::addmm"]
        self.assertEqual(entry["op_side"], "cpu")
        self.assertEqual(entry["op_occurrences"], 4)
        self.assertIn("[2, 8]", entry["input_shape"])
        self.assertGreater(entry["op_total_time(us)"], 0)
        self.assertAlmostEqual(entry["op_avg_time(us)"], entry["op_total_time(us)"] / 4,
                               places=3)
        ops = json.loads(lines(stdout, "OPS")[0])
        self.assertEqual(sorted(ops), ["aten::linear", "aten::t", "device_id"])
        self.assertEqual(sum(e["op_occurrences"] for e in ops["aten::linear"]), 4)
        self.assertEqual(lines(stdout, "MISSING"),
                         ["RuntimeError: The information of <NoSuchOp> is not found. Please "
                          "verify that the operator name is correct or the operator is used in "
                          "the network."])
        self.assertTrue(lines(stdout, "BAD_NAME")[0].startswith("TypeError: For "
                                                                "'Profiler.op_analyse()'"))
        self.assertTrue(lines(stdout, "BAD_DEVICE")[0].startswith("TypeError: For "
                                                                  "'Profiler.op_analyse()'"))


@needs_torch
class PlainPython(InScript, StartStop):
    def test_offline_analyse_step_list(self):
        out = os.path.join(self.tmp, "data")
        self.run_script(OFFLINE, out)
        self.run_script("from prof.mindspore import Profiler\n"
                        "Profiler.offline_analyse(%r, step_list=[2, 3])\n" % out)
        (run_dir,) = [os.path.join(out, d) for d in os.listdir(out) if d.endswith("_prof")]
        self.assertEqual(result_steps(run_dir), [2, 3])
        self.assertTrue(os.path.exists(os.path.join(run_dir, "raw.removed")))  # simplified
        # a second parse: the raw data is gone, and it says why
        stdout, _ = self.run_script("from prof.mindspore import Profiler\n"
                                    "try:\n    Profiler.offline_analyse(%r)\n"
                                    "except RuntimeError as e:\n    print(e)\n" % out)
        self.assertIn("raw was removed by data_simplification", stdout)


class NoSteps(InScript):
    def test_everything_recorded_without_steps(self):
        out = os.path.join(self.tmp, "data")
        _, stderr = self.run_script(NO_STEPS, out)
        result = os.path.join(out, "profiler")
        self.assertIsNone(window_steps(result))
        self.assertIn("everything recorded (no step ended)", stderr)
        with open(os.path.join(result, "PROFILER_OUTPUT", "trace_view.json")) as f:
            names = {e.get("name") for e in json.load(f)["traceEvents"] if e.get("ph") == "X"}
        self.assertTrue({"infer0", "infer1", "infer2"} <= names, names)


@needs_torch
class UnderProfRun(InScript, StartStop):
    UNDER_PROF = True


class BadInput(unittest.TestCase):
    """Checked before anything starts: no prof session is needed."""

    def setUp(self):
        self.Profiler = prof_module("prof.mindspore").Profiler

    def test_unknown_keyword_is_named(self):
        with self.assertRaises(TypeError) as c:
            self.Profiler(output_path="x", profile_mem=True, l3_cache=True)
        self.assertIn("unknown keyword arguments: l3_cache, profile_mem", str(c.exception))

    def test_bad_values_are_named(self):
        for kw, what, exc in (({"start_profile": "yes"}, "start_profile:", TypeError),
                              ({"timeline_limit": 0}, "timeline_limit:", ValueError),
                              ({"aicore_metrics": 9}, "aicore_metrics:", ValueError),
                              ({"profile_framework": "cpu"}, "profile_framework:", ValueError),
                              ({"output_path": 3}, "output_path:", TypeError)):
            with self.assertRaises(exc) as c:
                self.Profiler(**kw)
            self.assertIn(what, str(c.exception))

    def test_offline_step_list(self):
        with self.assertRaises(ValueError) as c:
            self.Profiler.offline_analyse("/nonexistent", step_list=[1, 3])
        self.assertIn("consecutive", str(c.exception))


if __name__ == "__main__":
    unittest.main()
