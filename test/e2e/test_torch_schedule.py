"""Which steps of a PyTorch program record, and that framework operators
follow them exactly: schedules (torch.profiler.schedule semantics) and
--dynamic activations, on the shipped example. Skipped when
/usr/bin/python3 cannot import torch."""
import collections
import json
import os
import subprocess
import unittest

from proftest import PROF, PYTHON, ProfTestCase, Run, events
from test_torch_steps import EXAMPLE, agent_logs, needs_torch, ops_in, step_numbers, steps_by_pid


def recorded(trace):
    by_pid = steps_by_pid(trace)
    assert len(by_pid) <= 1, list(by_pid)
    return next(iter(by_pid.values())) if by_pid else []


class OpsFollowSteps:
    def assertOpsOnlyInSteps(self, trace, steps):
        """Every operator lies in a recorded step, and each recorded step has
        the whole of its training iteration (3 linear layers, 1 SGD step)."""
        ops = events(trace, ph="X", cat="cpu_op") + \
            events(trace, ph="X", cat="user_annotation", name="Optimizer.step#SGD.step")
        self.assertTrue(ops, "no operator recorded")
        for e in ops:
            self.assertTrue(any(ops_in([e], st) for st in steps), "operator outside the recorded steps: %r" % e)
        for st in steps:
            names = collections.Counter(e["name"] for e in ops_in(ops, st))
            self.assertEqual(names["aten::linear"], 3, st["name"])
            self.assertEqual(names["Optimizer.step#SGD.step"], 1, st["name"])


@needs_torch
class Schedules(ProfTestCase, OpsFollowSteps):
    def check(self, steps, schedule, expected, shapes=False):
        opts = {"schedule": schedule}
        if shapes:
            opts["record_shapes"] = True
        run = self.prof_run([PYTHON, EXAMPLE, "--steps", str(steps), "--hidden", "64"],
                            env={"PROF_OPTIONS": json.dumps(opts)})
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertParsedClean(run)
        trace = run.trace()
        st = recorded(trace)
        self.assertEqual(step_numbers(st), expected)
        self.assertOpsOnlyInSteps(trace, st)
        self.assertNotIn("hook stopped after", agent_logs(run))
        return trace

    def test_wait_warmup_active_repeat(self):
        self.check(10, {"wait": 1, "warmup": 1, "active": 2, "repeat": 2}, [3, 4, 7, 8])

    def test_skip_first_one_cycle(self):
        self.check(10, {"skip_first": 2, "wait": 0, "warmup": 0, "active": 3, "repeat": 1}, [3, 4, 5])

    def test_warmup_every_cycle(self):
        # W R R W R R W R R: the profiler runs throughout, warm-up steps dropped
        trace = self.check(9, {"warmup": 1, "active": 2}, [2, 3, 5, 6, 8, 9], shapes=True)
        addmm = events(trace, ph="X", cat="cpu_op", name="aten::addmm")
        self.assertTrue(addmm)
        self.assertTrue(all("Input Dims" in e["args"] for e in addmm))

    def test_back_to_back_windows(self):
        self.check(8, {"skip_first": 1, "active": 2, "repeat": 2}, [2, 3, 4, 5])

    def test_repeat_forever(self):
        self.check(9, {"wait": 2, "active": 1}, [3, 6, 9])


@needs_torch
class Dynamic(ProfTestCase, OpsFollowSteps):
    WAIT_STEPS = 5

    def start(self, steps):
        """Starts the example and returns once it has done WAIT_STEPS steps."""
        self.dyn = os.path.join(self.tmp, "dyn")
        self.out = os.path.join(self.tmp, "out")
        self.proc = subprocess.Popen(
            [PROF, "run", "-o", self.out, "--dynamic", self.dyn, "--", PYTHON, EXAMPLE,
             "--steps", str(steps), "--hidden", "64", "--sleep-per-step", "0.04",
             "--print-every", "1"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.cfg = os.path.join(self.dyn, "profiler_config.json")
        self.stdout = ""
        for line in self.proc.stdout:
            self.stdout += line
            if line.startswith("step %d " % self.WAIT_STEPS):
                break
        with open(self.cfg) as f:
            self.template = json.load(f)

    def edit(self, text):
        with open(self.cfg + ".new", "w") as f:
            f.write(text)
        os.rename(self.cfg + ".new", self.cfg)

    def finish(self):
        stdout, stderr = self.proc.communicate(timeout=120)
        stdout = self.stdout + stdout
        run = Run(subprocess.CompletedProcess(self.proc.args, self.proc.returncode, stdout, stderr),
                  self.out)
        self.assertEqual(run.rc, 0, stderr)
        with open(os.path.join(self.dyn, "prof_dynamic.log")) as f:
            self.dyn_log = f.read()
        return run

    def test_edit_records_exactly_active_steps_with_operators(self):
        self.start(40)
        self.assertIn("active", self.template)
        self.edit(json.dumps(dict(self.template, active=3, record_shapes=True)))
        run = self.finish()
        trace = run.trace()
        st = recorded(trace)
        nums = step_numbers(st)
        self.assertEqual(len(nums), 3, nums)
        self.assertEqual(nums, list(range(nums[0], nums[0] + 3)))
        self.assertGreater(nums[0], self.WAIT_STEPS, "recorded before the edit")
        self.assertLess(nums[-1], 40)
        self.assertOpsOnlyInSteps(trace, st)
        for e in events(trace, ph="X", cat="cpu_op", name="aten::addmm"):
            self.assertIn("Input Dims", e["args"])
        self.assertIn("activation 1: recording 3 steps", self.dyn_log)

    def test_invalid_edit_is_ignored(self):
        self.start(30)
        self.edit('{"active": 3, ')
        run = self.finish()
        self.assertIn("invalid JSON", self.dyn_log)
        trace = run.trace()
        self.assertEqual(recorded(trace), [])
        self.assertEqual(events(trace, ph="X", cat="cpu_op"), [])


if __name__ == "__main__":
    unittest.main()
