"""PyTorch programs under `prof run`, unmodified: steps from Optimizer.step(),
framework operators, DataLoader workers, a program that profiles itself.
Skipped when /usr/bin/python3 cannot import torch."""
import collections
import glob
import json
import os
import subprocess
import unittest

from proftest import PROF, PYTHON, SRC, ProfTestCase, events, span

EXAMPLE = os.path.join(SRC, "share", "prof", "examples", "train.py")
WORKLOADS_SRC = os.path.join(SRC, "test", "workloads")


def torch_missing():
    try:
        r = subprocess.run([PYTHON, "-c", "import torch"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    return None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["?"])[-1]


MISSING = torch_missing()
needs_torch = unittest.skipIf(MISSING, "%s cannot import torch (%s)" % (PYTHON, MISSING))


def steps_by_pid(trace):
    out = collections.defaultdict(list)
    for e in events(trace, ph="X"):
        if e["name"].startswith("ProfilerStep#"):
            out[e["pid"]].append(e)
    for v in out.values():
        v.sort(key=lambda e: float(e["ts"]))
    return out


def step_numbers(steps):
    return [int(e["name"].split("#")[1]) for e in steps]


def ops_in(ops, step, slack=2.0):
    s, t = span(step)
    return [e for e in ops if s - slack <= float(e["ts"]) and span(e)[1] <= t + slack]


def agent_logs(run):
    text = ""
    for p in sorted(glob.glob(run.path("logs", "agent-*.log"))):
        with open(p) as f:
            text += f.read()
    return text


class TorchCase(ProfTestCase):
    def run_torch(self, script, *args, options=(), env=None):
        run = self.prof_run([PYTHON, script, *args], *options, env=env)
        self.assertEqual(run.rc, 0, run.stdout + run.stderr)
        self.assertParsedClean(run)
        return run

    def main_steps(self, trace):
        by_pid = steps_by_pid(trace)
        self.assertEqual(len(by_pid), 1, "steps in more than one process: %s" % list(by_pid))
        return next(iter(by_pid.items()))


@needs_torch
class Example(TorchCase):
    STEPS = 20

    @classmethod
    def setUpClass(cls):
        # one run of the shipped example for all the assertions below
        cls.holder = TorchCase()
        cls.holder.setUp()
        cls.r = cls.holder.run_torch(EXAMPLE, "--steps", str(cls.STEPS),
                                       env={"PROF_OPTIONS": json.dumps({"record_shapes": True})})
        cls.trace = cls.r.trace()

    @classmethod
    def tearDownClass(cls):
        cls.holder.tearDown()

    def test_one_profiler_step_per_optimizer_step(self):
        self.assertIn("steps=%d " % self.STEPS, self.r.stdout)
        pid, steps = self.main_steps(self.trace)
        self.assertEqual(step_numbers(steps), list(range(1, self.STEPS + 1)))
        rows = self.r.csv_rows("step_trace_time.csv")
        self.assertEqual([int(r[1]) for r in rows[1:]], list(range(1, self.STEPS + 1)))

    def test_operators(self):
        ops = events(self.trace, ph="X", cat="cpu_op")
        names = collections.Counter(e["name"] for e in ops)
        self.assertEqual(names["aten::linear"], 3 * self.STEPS)
        self.assertGreater(names["aten::addmm"] + names["aten::mm"], 0)
        self.assertEqual(names["aten::relu"], 2 * self.STEPS)
        self.assertEqual(names["Optimizer.step#SGD.step"], 0, "record_function ranges are user annotations")
        annotations = events(self.trace, ph="X", cat="user_annotation", name="Optimizer.step#SGD.step")
        self.assertEqual(len(annotations), self.STEPS)
        self.assertTrue(any("Backward" in n for n in names), sorted(names))
        self.assertNotIn("prof::clock_sync", names)
        pid, _ = self.main_steps(self.trace)
        self.assertEqual({(e["pid"], e["tid"]) for e in ops}, {(pid, pid)}, "all on the main thread")

    def test_every_step_has_its_operators(self):
        # windows are flushed every 10 steps: nothing is lost at a flush
        ops = events(self.trace, ph="X", cat="cpu_op")
        framework = ops + events(self.trace, ph="X", cat="user_annotation", name="Optimizer.step#SGD.step")
        _, steps = self.main_steps(self.trace)
        for st in steps:
            inside = collections.Counter(e["name"] for e in ops_in(framework, st))
            self.assertEqual(inside["aten::linear"], 3, st["name"])
            self.assertEqual(inside["Optimizer.step#SGD.step"], 1, st["name"])
        # and no operator between steps; those before the first step are the
        # set-up (building the model), those after the last the program's end
        # (loss.item()), still recorded
        first_start, last_end = span(steps[0])[0], span(steps[-1])[1]
        for e in ops:
            if float(e["ts"]) >= last_end or float(e["ts"]) < first_start:
                continue
            self.assertTrue(any(ops_in([e], st) for st in steps), e)

    def test_first_step_begins_with_the_loop(self):
        """Recording begins with the process; step 1 begins once the
        optimizer is built (the hooks mark it), not at the imports."""
        built = events(self.trace, ph="i", name="Optimizer.__init__#SGD.__init__")
        self.assertEqual(len(built), 1)
        _, steps = self.main_steps(self.trace)
        self.assertGreaterEqual(span(steps[0])[0], float(built[0]["ts"]))
        # operators are collected from the training loop on (issue 17): the
        # model set-up before the optimizer was built is given up
        ops = events(self.trace, ph="X", cat="cpu_op")
        self.assertTrue(ops)
        self.assertFalse([e for e in ops if float(e["ts"]) < float(built[0]["ts"])])
        self.assertIn("the training loop begins (SGD built)", agent_logs(self.r))

    def test_flush_is_shown_as_prof_work(self):
        # 20 steps: flushed after steps 10 and 20 (the second one ends the
        # session at the last step or at exit), on the training thread,
        # category "prof", not user_annotation
        flushes = events(self.trace, ph="X", name="prof::operators flush")
        self.assertGreaterEqual(len(flushes), 1)
        self.assertEqual({e["cat"] for e in flushes}, {"prof"})
        pid, steps = self.main_steps(self.trace)
        self.assertEqual({e["tid"] for e in flushes}, {steps[0]["tid"]})
        self.assertFalse(events(self.trace, cat="user_annotation", name="prof::operators flush"))
        # its cost is logged, and every operator arrived
        self.assertIn("after torch's stop took", agent_logs(self.r))
        linear = events(self.trace, ph="X", cat="cpu_op", name="aten::linear")
        self.assertEqual(len(linear), 3 * self.STEPS)

    def test_input_dims_with_record_shapes(self):
        addmm = events(self.trace, ph="X", cat="cpu_op", name="aten::addmm")
        self.assertTrue(addmm)
        for e in addmm:
            dims = e["args"]["Input Dims"]
            self.assertEqual(len(dims), 5, e)
            self.assertEqual(dims[1][0], 64, e)  # the batch
            self.assertEqual(e["args"]["Input type"][:3], ["float"] * 3, e)

    def test_operator_csvs(self):
        rows = self.r.csv_rows("op_statistic.csv")
        counts = {r[1]: int(r[3]) for r in rows[1:]}
        self.assertEqual(counts.get("aten::linear"), 3 * self.STEPS)
        rows = self.r.csv_rows("operator_details.csv")
        self.assertTrue(any(r[0] == "aten::addmm" and r[1].startswith("[[") for r in rows[1:]), rows[:5])

    def test_agent_log(self):
        log = agent_logs(self.r)
        self.assertIn("steps via Optimizer._hook_for_profile", log)
        self.assertIn("%d optimizer steps ended steps" % self.STEPS, log)
        self.assertNotIn("hook stopped after", log)


@needs_torch
class Optimizers(TorchCase):
    """Each pattern's step count; steps only (no operators) to keep it quick."""

    def check(self, case, iterations=6, activities="DEVICE"):
        run = self.run_torch(os.path.join(WORKLOADS_SRC, "torch_optimizers.py"), case, str(iterations),
                             options=["--activities", activities])
        expected = int(run.stdout.split("expected steps")[1].split()[0])
        _, steps = self.main_steps(run.trace())
        self.assertEqual(step_numbers(steps), list(range(1, expected + 1)), case)
        self.assertNotIn("hook stopped after", agent_logs(run))
        return run

    def test_two_optimizers_gan_style(self):
        self.check("two")

    def test_steps_only(self):
        """--activities "": steps, no operators, no device (the cheapest run)."""
        run = self.check("custom", activities="")
        t = run.trace()
        self.assertEqual(events(t, ph="X", cat="cpu_op"), [])
        self.assertEqual(events(t, ph="X", cat="kernel"), [])
        self.assertEqual(run.json("profiler_info.json")["config"]["activities"], [])

    def test_custom_optimizer_subclass(self):
        self.check("custom")

    def test_subclass_calling_super_step(self):
        self.check("super")

    def test_lbfgs_with_closure(self):
        self.check("lbfgs")

    def test_sgd_with_steplr(self):
        self.check("steplr")

    def test_optimizer_stepping_an_inner_one(self):
        self.check("nested")

    def test_other_optimizer_takes_over(self):
        self.check("takeover")

    def test_grad_scaler_skipping_updates(self):
        run = self.check("scaler")
        self.assertIn("6 optimizer steps ended steps in this process; GradScaler skipped the "
                      "update of 2 of them", agent_logs(run))


@needs_torch
class NvtxOperatorsWithoutCuda(TorchCase):
    def test_usual_way_until_cuda_is_traced(self):
        # PROF_OPS_NVTX=1 where it cannot work (no GPU; here also a torch
        # whose NVTX ranges name no op ids, or a prof without CUDA): the
        # operators come the usual way, every one, and the user hears why
        # unless it is only that CUDA is not traced (yet)
        run = self.run_torch(EXAMPLE, "--steps", "12", env={"PROF_OPS_NVTX": "1"})
        log = agent_logs(run)
        linear = events(run.trace(), ph="X", cat="cpu_op", name="aten::linear")
        self.assertEqual(len(linear), 3 * 12)
        notes = [ln for ln in run.stderr.splitlines() if "PROF_OPS_NVTX" in ln]
        if "operators: not through NVTX yet: CUDA is not traced in this process yet" in log:
            self.assertEqual(notes, [], run.stderr)
        else:
            self.assertEqual(len(notes), 1, run.stderr)
            self.assertIn("prof collects operators the usual way", notes[0])
        self.assertIn("after torch's stop took", log)

    def test_by_default_quiet(self):
        # PROF_OPS_NVTX unset: the NVTX way is the default where it applies;
        # where it does not (no GPU, torch 1.x), the operators come the
        # usual way and the end of the run says nothing of NVTX
        run = self.run_torch(EXAMPLE, "--steps", "12")
        linear = events(run.trace(), ph="X", cat="cpu_op", name="aten::linear")
        self.assertEqual(len(linear), 3 * 12)
        self.assertNotIn("NVTX", run.stderr)
        log = agent_logs(run)
        self.assertTrue("operators: the usual way (torch's profiler), not through its NVTX "
                        "ranges" in log or "operators: not through NVTX yet" in log, log[-2000:])


@needs_torch
class UserProfiler(TorchCase):
    def test_prof_steps_aside(self):
        run = self.run_torch(os.path.join(WORKLOADS_SRC, "torch_user_profiler.py"), "12")
        seen = [int(n) for n in run.stdout.split("user profiler events")[1].split()]
        self.assertEqual(len(seen), 2)
        self.assertTrue(all(n > 0 for n in seen), run.stdout)
        trace = run.trace()
        _, steps = self.main_steps(trace)
        self.assertEqual(step_numbers(steps), list(range(1, 13)))
        self.assertIn("prof steps aside while it runs", agent_logs(run))
        # said on the terminal at the end, once, and kept in profiler_info.json
        notes = [ln for ln in run.stderr.splitlines() if ln.startswith("prof: note (pid ")]
        self.assertEqual(len(notes), 1, run.stderr)
        self.assertIn("the program runs a profiler of its own", notes[0])
        self.assertIn("prof steps aside while it runs", notes[0])
        kept = run.json("profiler_info.json")["end_info"]["notices"]
        self.assertEqual([n["processes"] for n in kept], [1], kept)
        self.assertIn(kept[0]["text"], notes[0])
        st = subprocess.run([PROF, "stats", run.run_dir], capture_output=True, text=True,
                            timeout=60)
        self.assertIn("Note: the program runs a profiler of its own", st.stdout)
        # ours collected in every step but those the program's profilers
        # recorded: 4 and 5 (torch.profiler), 8 (torch.autograd.profiler);
        # it started again as soon as each had ended, so 6 and 9 are whole
        ops = events(trace, ph="X", cat="cpu_op")
        for st in steps:
            linear = [e for e in ops_in(ops, st) if e["name"] == "aten::linear"]
            theirs = int(st["name"].split("#")[1]) in (4, 5, 8)
            self.assertEqual(len(linear), 0 if theirs else 2, st["name"])


@needs_torch
class DataLoaderWorkers(TorchCase):
    STEPS = 12

    def check(self, context):
        run = self.run_torch(EXAMPLE, "--steps", str(self.STEPS), "--hidden", "64", "--workers", "2",
                             "--mp-context", context)
        trace = run.trace()
        pid, steps = self.main_steps(trace)  # no steps in the workers
        self.assertEqual(step_numbers(steps), list(range(1, self.STEPS + 1)))
        fetch = collections.Counter(e["pid"] for e in events(trace, ph="X", name="DataLoader fetch"))
        self.assertEqual(len(fetch), 2, fetch)
        self.assertNotIn(pid, fetch)
        self.assertEqual(sum(fetch.values()), self.STEPS)  # one fetch per batch
        nxt = events(trace, ph="X", name="enumerate(DataLoader)#_BaseDataLoaderIter.__next__")
        self.assertEqual({e["pid"] for e in nxt}, {pid})
        self.assertEqual(len(nxt), self.STEPS + 1)  # the last one ends the loop
        ops = events(trace, ph="X", cat="cpu_op")
        self.assertTrue(ops)
        self.assertEqual({e["pid"] for e in ops}, {pid}, "workers collect no operators")
        self.assertNotIn("hook stopped after", agent_logs(run))

    def test_fork_workers(self):
        self.check("fork")

    def test_spawn_workers(self):
        self.check("spawn")


if __name__ == "__main__":
    unittest.main()
