"""prof's Python hooks (share/prof/python) against fake torch modules: step
detection on the three optimizer hook paths (torch 1.x _hook_for_profile,
2.1+ _patch_step_function, 2.x global pre/post hooks), the two-optimizers
rule, the operator collector's window logic and conversion, and
sitecustomize's start-up behaviour. Needs no torch, so the 2.x paths are
tested on a machine that has only 1.13 (or no torch at all)."""
import functools
import gc
import itertools
import os
import subprocess
import sys
import tempfile
import threading
import time
import types
import unittest

from proftest import PYTHON, SRC

PYDIR = os.path.join(SRC, "share", "prof", "python")
sys.path.insert(0, PYDIR)

from _prof_hooks import agent as A  # noqa: E402
from _prof_hooks.guard import Guard  # noqa: E402
from _prof_hooks.agent import unpack_ops  # noqa: E402
from _prof_hooks.ops import Collector  # noqa: E402
from _prof_hooks.steps import LeaderRule, Steps  # noqa: E402


# --- fake torch.optim.optimizer modules -------------------------------------

def fake_optim(kind):
    """A torch.optim.optimizer look-alike. kind: "1.x" (_hook_for_profile),
    "2.1" (_patch_step_function), "global" (only the global pre/post hooks)."""
    mod = types.ModuleType("fake_optimizer_" + kind)
    mod.ranges = []  # what torch's own record_function wrapper saw
    pre_hooks, post_hooks = [], []

    def profile_hook_step(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self = args[0]
            mod.ranges.append("enter " + type(self).__name__)
            try:
                for h in pre_hooks:
                    h(self, args, kwargs)
                out = func(*args, **kwargs)
                for h in post_hooks:
                    h(self, args, kwargs)
                return out
            finally:
                mod.ranges.append("exit " + type(self).__name__)
        return wrapper

    def patch(self):
        hooked = getattr(self.__class__.step, "hooked", None)
        if not hooked:
            self.__class__.step = profile_hook_step(self.__class__.step)
            self.__class__.step.hooked = True

    class Optimizer:
        def __init__(self, name="opt"):
            self.name = name
            self.calls = 0
            getattr(self, patch_name)()

        def step(self, closure=None):
            raise NotImplementedError

    patch_name = {"1.x": "_hook_for_profile", "2.1": "_patch_step_function",
                  "global": "_private_patch"}[kind]
    setattr(Optimizer, patch_name, patch)
    mod.Optimizer = Optimizer
    if kind != "1.x":
        mod.register_optimizer_step_pre_hook = pre_hooks.append
        mod.register_optimizer_step_post_hook = post_hooks.append
    return mod


def optimizer_classes(mod):
    class SGD(mod.Optimizer):
        def step(self, closure=None):
            self.calls += 1
            if closure is not None:
                closure()

    class SubSGD(SGD):
        def step(self, closure=None):
            return super().step(closure)

    class Failing(SGD):
        fail = True

        def step(self, closure=None):
            super().step(closure)
            if self.fail:
                raise RuntimeError("nan in the gradients")

    class Wrapper(mod.Optimizer):
        def __init__(self, inner):
            self.inner = inner
            super().__init__("wrapper")

        def step(self, closure=None):
            return self.inner.step(closure)

    return SGD, SubSGD, Failing, Wrapper


class Log(list):
    def __call__(self, msg):
        self.append(msg)


class StepPaths(unittest.TestCase):
    def setUp(self):
        self.ended = 0
        self.log = Log()

    def install(self, kind):
        mod = fake_optim(kind)
        steps = Steps(self.on_step, Guard("step", self.log))
        path = steps.install(mod)
        return mod, steps, path

    def on_step(self):
        self.ended += 1

    def count(self, kind, scenario):
        """Steps ended by scenario(classes) on a fresh fake torch."""
        mod, steps, path = self.install(kind)
        self.ended = 0
        scenario(*optimizer_classes(mod))
        self.assertEqual(self.log, [])
        self.assertEqual(steps.count, self.ended)
        return self.ended, path

    def check_all_cases(self, kind, expected_path):
        def plain(SGD, *_):
            opt = SGD()
            for _ in range(3):
                opt.step()

        def subclass(SGD, SubSGD, *_):
            SGD()                              # SGD.step wrapped by "torch" first
            sub = SubSGD()                     # super().step() goes through SGD's wrappers
            for _ in range(3):
                sub.step()
            self.assertEqual(sub.calls, 3)

        def nested(SGD, SubSGD, Failing, Wrapper):
            opt = Wrapper(SGD())
            for _ in range(3):
                opt.step()

        def closure_steps(SGD, *_):            # a closure that steps (LBFGS-like re-entry)
            inner, outer = SGD(), SGD()
            for _ in range(3):
                outer.step(closure=inner.step)

        def raising(SGD, SubSGD, Failing, Wrapper):
            bad = Failing()
            with self.assertRaises(RuntimeError):
                bad.step()                     # does not end a step...
            bad.fail = False
            for _ in range(3):
                bad.step()                     # ... and leaves no depth behind

        ended, path = self.count(kind, plain)
        self.assertEqual((ended, path), (3, expected_path))
        self.assertEqual(self.count(kind, subclass)[0], 3, "subclass -> super().step() counts once")
        self.assertEqual(self.count(kind, nested)[0], 3, "an optimizer stepping an inner one counts once")
        self.assertEqual(self.count(kind, closure_steps)[0], 3, "a step inside a step counts once")
        self.assertEqual(self.count(kind, raising)[0], 3, "a step that raised")

    def test_torch_1x_hook_for_profile(self):
        self.check_all_cases("1.x", "Optimizer._hook_for_profile")

    def test_torch_21_patch_step_function(self):
        self.check_all_cases("2.1", "Optimizer._patch_step_function")

    def test_torch_2x_global_hooks(self):
        self.check_all_cases("global", "register_optimizer_step_post_hook")

    def test_class_wrapper_is_outside_torchs_range(self):
        mod, steps, _ = self.install("1.x")
        SGD = optimizer_classes(mod)[0]
        seen = []
        steps._on_step = lambda: seen.append(list(mod.ranges))
        SGD().step()
        self.assertEqual(seen, [["enter SGD", "exit SGD"]], "the step must end after torch's range closed")

    def test_threads_have_their_own_depth(self):
        mod, steps, _ = self.install("1.x")
        SGD = optimizer_classes(mod)[0]
        opt = SGD()
        gate = threading.Barrier(2)

        def slow():
            gate.wait(5)

        t = threading.Thread(target=lambda: opt.step(closure=slow))
        t.start()
        opt.step(closure=slow)             # in flight on two threads at once: both top-level
        t.join()
        self.assertEqual(self.ended, 2)

    def test_broken_hook_switches_itself_off(self):
        mod, steps, _ = self.install("1.x")
        SGD = optimizer_classes(mod)[0]

        def boom():
            raise ValueError("agent gone")

        steps._on_step = boom
        opt = SGD()
        opt.step()
        opt.step()                         # the program goes on; the hook is off
        self.assertEqual(opt.calls, 2)
        self.assertFalse(steps.guard.on)
        self.assertEqual(len(self.log), 1)
        self.assertIn("the step hook stopped after ValueError: agent gone", self.log[0])
        self.assertTrue(self.log[0].startswith("notice: "), self.log[0])   # said at the end


class Leader(unittest.TestCase):
    class Opt:
        pass

    def run_rule(self, seq):
        rule = LeaderRule()
        return [rule.ends_step(o) for o in seq]

    def test_gan_two_optimizers_one_step_per_iteration(self):
        # steps end at D1, then (the cycle seen) at G2, G3, G4: one a
        # cycle, and the last G update inside the last step (issue 17 §6)
        d, g = self.Opt(), self.Opt()
        self.assertEqual(self.run_rule([d, g] * 4),
                         [True, False, False, True, False, True, False, True])

    def test_three_optimizers_in_a_cycle(self):
        a, b, c = self.Opt(), self.Opt(), self.Opt()
        ends = self.run_rule([a, b, c] * 4)
        self.assertEqual(sum(ends), 4)
        self.assertTrue(ends[-1])    # the cycle's last optimizer ends it
        self.assertEqual(ends[6:], [False, False, True, False, False, True])

    def test_critic_steps_then_generator(self):
        # WGAN-style, the critic stepping 3 times to G's once: not a cycle of
        # one step each; the critic (first) keeps ending steps, as before
        d, g = self.Opt(), self.Opt()
        self.assertEqual(self.run_rule([d, d, d, g] * 3), [True, True, True, False] * 3)

    def test_other_optimizer_taking_over(self):
        a, b = self.Opt(), self.Opt()
        self.assertEqual(self.run_rule([a, a, b, b, b, a]), [True, True, False, True, True, False])

    def test_collected_leader_hands_over(self):
        rule = LeaderRule()
        a = self.Opt()
        self.assertTrue(rule.ends_step(a))
        del a
        gc.collect()
        self.assertTrue(rule.ends_step(self.Opt()))


# --- the operator collector on a fake profiler ------------------------------

DELTA_NS = 1_700_000_000_000_000_000  # the fake profiler's clock: epoch-like, far from monotonic


class FakeEvent:
    def __init__(self, name, start, end, tid=1, scope=0, fwd=0, seq=-1, shapes=(), dtypes=(),
                 stack=(), ns_api=False):
        self._n, self._s, self._e, self._tid, self._scope = name, start, end, tid, scope
        self._fwd, self._seq, self._shapes, self._dtypes, self._stack = fwd, seq, shapes, dtypes, stack
        if ns_api:  # torch 2.x: ns times
            self.start_ns = lambda: self._s
            self.duration_ns = lambda: self._e - self._s
        else:       # torch 1.13: us times
            self.start_us = lambda: self._s // 1000
            self.duration_us = lambda: self._e // 1000 - self._s // 1000

    def name(self): return self._n
    def start_thread_id(self): return self._tid
    def fwd_thread_id(self): return self._fwd
    def scope(self): return self._scope
    def sequence_nr(self): return self._seq
    def shapes(self): return [list(s) for s in self._shapes]
    def dtypes(self): return list(self._dtypes)
    def stack(self): return list(self._stack)


class FakeProfilerModule:
    """torch.autograd.profiler's face as the collector uses it."""

    def __init__(self, ns_api):
        self.ns_api = ns_api
        self.started = []
        self.stops = 0
        self.enabled = False
        self.pending = []
        fake = self

        class profile:
            def __init__(self, use_cpu=True, record_shapes=False, with_stack=False,
                         profile_memory=False, with_modules=False, use_kineto=False):
                self.kw = dict(record_shapes=record_shapes, with_stack=with_stack)

            def __enter__(self):
                assert not fake.enabled, "profiler already enabled"
                fake.enabled = True
                fake.started.append(self.kw)
                return self

        class record_function:
            def __init__(self, name):
                self.name = name

            def __enter__(self):
                self.t = time.monotonic_ns() + DELTA_NS

            def __exit__(self, *exc):
                fake.add(self.name, self.t, time.monotonic_ns() + DELTA_NS)

        self.profile = profile
        self.record_function = record_function

    def empty(self, n):
        """torch.empty as the profiler sees it: an aten::empty event, stamped
        a little after the call begins and before it returns."""
        t = time.monotonic_ns()
        self.add("aten::empty", t + 300 + DELTA_NS, t + 500 + DELTA_NS)

    def add(self, name, start, end, **kw):
        self.pending.append(FakeEvent(name, start, end, ns_api=self.ns_api, **kw))

    def op(self, name, start_mono, end_mono, **kw):
        """An operator that ran at these monotonic times."""
        self.add(name, start_mono + DELTA_NS, end_mono + DELTA_NS, **kw)

    def _disable_profiler(self):
        assert self.enabled
        self.enabled = False
        self.stops += 1
        events, self.pending = self.pending, []
        return types.SimpleNamespace(events=lambda: events)


class FakeAgent:
    def __init__(self):
        self.flags, self.windows = 0, 0
        self.ops = []
        self.ranges = []   # prof's own ranges on the thread: the operator flush
        self.log = Log()

    def state(self):
        return self.flags, self.windows

    def holds_cupti(self):
        return False

    def nvtx_ops_begin(self):
        return "setting: this agent has no CUDA backend"

    def nvtx_ops_seen(self):
        return None

    def fw_dir(self):
        return None

    def charge(self, nbytes):
        return True

    def range_push(self, name):
        self.ranges.append((name, "push"))

    def range_pop(self):
        self.ranges.append((None, "pop"))

    def fw_ops(self, buf):
        ops = unpack_ops(buf)
        self.ops.extend(ops)
        return len(ops)


class KinetoSave(unittest.TestCase):
    """PROF_OPS_KINETO_SAVE=1: torch's own export writes a flush, with
    prof's note beside it for the parse (ingest/parse_kineto.h)."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(lambda: subprocess.call(["rm", "-rf", self.dir]))
        os.environ["PROF_OPS_KINETO_SAVE"] = "1"
        self.addCleanup(lambda: os.environ.pop("PROF_OPS_KINETO_SAVE", None))
        self.prof = FakeProfilerModule(True)
        self.saved, self.fail = [], None
        disable = self.prof._disable_profiler

        def with_save():
            result = disable()

            def save(path):
                if self.fail:
                    raise RuntimeError(self.fail)
                with open(path, "w") as f:
                    f.write('{"traceEvents": []}')
                self.saved.append(path)
            result.save = save
            return result
        self.prof._disable_profiler = with_save
        self.agent = FakeAgent()
        self.agent.fw_dir = lambda: self.dir
        self.coll = Collector(self.prof, self.prof.empty, self.agent,
                              Guard("operators", self.agent.log), True)

    def window(self, flags, op="aten::mm"):
        self.agent.flags = flags
        self.coll.update()
        t = time.monotonic_ns()
        self.prof.op(op, t + 1000, t + 5000)
        self.agent.flags = 0
        self.coll.update()

    def test_flush_written_by_torch_with_note(self):
        self.window(A.OPS | A.RECORDING)
        self.assertEqual(self.agent.ops, [])          # nothing converted here
        self.assertEqual(self.saved, [os.path.join(self.dir, "kineto-1.json")])
        with open(os.path.join(self.dir, "kineto-1.meta")) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], "pid %d" % os.getpid())
        self.assertEqual(lines[1], "tid %d" % threading.get_native_id())
        keep = int(lines[2].split()[1])
        marks = [tuple(map(int, l.split()[1:])) for l in lines[3:]]
        self.assertEqual(len(marks), 8)                # ops.SYNC_CALLS, each timed
        self.assertTrue(all(a <= b < keep for a, b in marks))
        self.assertFalse(os.path.exists(os.path.join(self.dir, "kineto-1.meta.tmp")))
        self.assertIn("written by torch", self.agent.log[-1])

    def test_details_or_failure_convert_here(self):
        self.window(A.OPS | A.RECORDING | A.SHAPES, "shaped")   # in torch's JSON
        self.assertEqual(len(self.saved), 1)
        del self.saved[:]
        self.window(A.OPS | A.RECORDING | A.STACK, "stacked")   # stacks: the getters
        self.assertEqual([o["name"] for o in self.agent.ops], ["stacked"])
        self.assertEqual(self.saved, [])
        self.fail = "disk full"
        self.window(A.OPS | A.RECORDING, "plain")
        self.assertEqual([o["name"] for o in self.agent.ops], ["stacked", "plain"])
        self.assertTrue(any(m.startswith("notice: torch could not write") and "disk full" in m
                            for m in self.agent.log))
        self.fail = None
        self.window(A.OPS | A.RECORDING, "after")       # converted here from then on
        self.assertEqual(self.saved, [])
        self.assertEqual(self.agent.ops[-1]["name"], "after")

    def test_storage_limit_reached(self):
        self.agent.charge = lambda n: False    # --storage-limit spent
        self.window(A.OPS | A.RECORDING)
        self.assertEqual(os.listdir(self.dir), [])    # not kept: the limit holds
        self.assertEqual(self.agent.ops, [])
        self.assertTrue(any("storage limit" in m for m in self.agent.log))
        self.window(A.OPS | A.RECORDING, "next")      # then the agent's writer decides
        self.assertEqual([o["name"] for o in self.agent.ops], ["next"])

    def test_waiting_files_capped(self):
        from _prof_hooks import ops
        saved = ops.SAVE_LIMIT
        ops.SAVE_LIMIT = 30    # bytes: each fake flush file has 19
        self.addCleanup(setattr, ops, "SAVE_LIMIT", saved)
        self.window(A.OPS | A.RECORDING)
        os.unlink(self.saved[0])                  # the launcher converted it
        self.window(A.OPS | A.RECORDING)          # 38 written, 19 waiting: on
        self.window(A.OPS | A.RECORDING)          # 38 waiting: the Python way next
        self.assertEqual(len(self.saved), 3)
        self.assertTrue(any("waiting to be converted" in m for m in self.agent.log))
        self.window(A.OPS | A.RECORDING, "next")
        self.assertEqual(len(self.saved), 3)
        self.assertEqual([o["name"] for o in self.agent.ops], ["next"])

    def test_off_without_the_variable(self):
        os.environ.pop("PROF_OPS_KINETO_SAVE")
        self.coll = Collector(self.prof, self.prof.empty, self.agent,
                              Guard("operators", self.agent.log), True)
        self.window(A.OPS | A.RECORDING)
        self.assertEqual(self.saved, [])
        self.assertEqual(len(self.agent.ops), 1)


class NvtxOps(unittest.TestCase):
    """PROF_OPS_NVTX=1: torch's NVTX observer (emit_nvtx) instead of its
    profiler, when the agent records NVTX here; the operators reach prof
    through CUPTI (test_cuda_convert, e2e.test_cuda_fake), not the hooks."""

    def setUp(self):
        os.environ["PROF_OPS_NVTX"] = "1"
        self.addCleanup(lambda: os.environ.pop("PROF_OPS_NVTX", None))
        saved = sys.modules.get("torch")
        self.torch = types.SimpleNamespace(__version__="2.5.1+cu124",
                                           version=types.SimpleNamespace(cuda="12.4"))
        sys.modules["torch"] = self.torch
        self.addCleanup(lambda: sys.modules.__setitem__("torch", saved) if saved
                        else sys.modules.pop("torch", None))
        self.prof = FakeProfilerModule(True)
        self.nvtx = []     # ("enter" | "exit", record_shapes)
        self.enter_fails = None
        test = self

        class emit_nvtx:
            def __init__(self, enabled=True, record_shapes=False):
                self.shapes = record_shapes

            def __enter__(self):
                if test.enter_fails:
                    raise RuntimeError(test.enter_fails)
                test.nvtx.append(("enter", self.shapes))
                test.prof.enabled = True

            def __exit__(self, *exc):
                test.nvtx.append(("exit", self.shapes))
                test.prof.enabled = False
        self.prof.emit_nvtx = emit_nvtx
        self.agent = FakeAgent()
        self.why = None
        self.agent.nvtx_ops_begin = lambda: self.why
        self.seen = itertools.count()                 # the agent's hook takes each range
        self.agent.nvtx_ops_seen = lambda: next(self.seen)
        self.coll = Collector(self.prof, self.prof.empty, self.agent,
                              Guard("operators", self.agent.log), True)

    def step(self, flags, windows=1):
        self.agent.flags, self.agent.windows = flags, windows
        self.coll.update()

    def notices(self):
        return [m for m in self.agent.log if m.startswith("notice:")]

    def test_no_flushes_on_the_programs_thread(self):
        REC = A.OPS | A.RECORDING
        for _ in range(25):
            self.step(REC)
        self.assertEqual(self.nvtx, [("enter", False)])
        self.assertEqual(self.prof.started, [])       # torch's profiler never ran
        self.assertEqual(self.agent.ranges, [])       # no flush
        self.step(0)                                  # the window ends
        self.assertEqual(self.nvtx, [("enter", False), ("exit", False)])
        self.step(REC, 2)
        self.coll.at_exit()
        self.assertEqual(len(self.nvtx), 4)
        self.assertEqual(self.agent.ops, [])          # the agent has them from CUPTI
        self.assertTrue(any("through torch's NVTX ranges" in m for m in self.agent.log))
        self.assertEqual(self.notices(), [])

    def test_fork_child_drops_the_observer_at_once(self):
        # a DataLoader worker forked while it runs: switched off in the
        # fork handler, before the child's first operator, and without
        # emit_nvtx's exit (which would synchronize CUDA in the child)
        self.step(A.OPS | A.RECORDING)
        self.assertTrue(self.prof.enabled)
        self.coll.after_fork_in_child()
        self.assertFalse(self.prof.enabled)
        self.assertEqual(self.prof.stops, 1)
        self.assertEqual(self.nvtx, [("enter", False)])
        self.coll.check_fork()                        # the child's first hook: nothing left
        self.assertEqual(self.prof.stops, 1)
        self.coll.at_exit()
        self.assertEqual(self.nvtx, [("enter", False)])

    def test_agent_says_no_the_usual_way_and_a_notice(self):
        self.why = "setting: NVTX is not traced (msprof_tx false, or PROF_CUDA_SKIP_KINDS)"
        self.step(A.OPS | A.RECORDING)
        self.assertEqual(self.nvtx, [])
        self.assertEqual(len(self.prof.started), 1)
        t = time.monotonic_ns()
        self.prof.op("aten::mm", t + 1000, t + 5000)
        self.step(0)
        self.assertEqual([o["name"] for o in self.agent.ops], ["aten::mm"])
        self.assertEqual(len(self.notices()), 1)
        self.assertIn("msprof_tx false", self.notices()[0])
        self.assertNotIn("setting:", self.notices()[0])
        self.why = None
        self.step(A.OPS | A.RECORDING, 2)             # not tried again
        self.assertEqual(self.nvtx, [])

    def test_cuda_not_traced_yet_waits_without_a_notice(self):
        REC = A.OPS | A.RECORDING
        self.why = "CUDA is not traced in this process yet (device activity off, or CUDA ...)"
        self.step(REC)
        self.assertEqual(len(self.prof.started), 1)
        self.why = None                               # cuInit came meanwhile
        for _ in range(10):
            self.step(REC)
        self.assertEqual(self.prof.stops, 1)          # the flush at ten steps ...
        self.assertEqual(self.nvtx, [("enter", False)])   # ... restarted through NVTX
        self.assertEqual(self.notices(), [])

    def test_details_or_old_torch_or_failure_go_the_usual_way(self):
        self.step(A.OPS | A.RECORDING | A.SHAPES)     # types and shapes: torch's profiler
        self.assertEqual(self.nvtx, [])
        self.assertEqual(len(self.prof.started), 1)
        self.assertIn("carry no call stacks, shapes", self.notices()[0])
        self.step(0)
        del self.agent.log[:]
        self.enter_fails = "Can't use NVTX profiler - PyTorch was compiled without CUDA"
        self.step(A.OPS | A.RECORDING, 2)
        self.assertEqual(len(self.prof.started), 2)
        self.assertIn("compiled without CUDA", self.notices()[0])
        self.step(0)
        self.torch.__version__ = "1.13.1"
        self.setUp_again()
        self.step(A.OPS | A.RECORDING, 3)
        self.assertEqual(self.nvtx, [])
        self.assertIn("torch 1.13.1's NVTX ranges name no operator ids", self.notices()[0])

    def test_by_default_where_it_applies(self):
        # PROF_OPS_NVTX unset: the NVTX way all the same, torch 2.x with
        # CUDA in a process whose NVTX the agent traces
        os.environ.pop("PROF_OPS_NVTX")
        self.setUp_again()
        for _ in range(25):
            self.step(A.OPS | A.RECORDING)
        self.assertEqual(self.nvtx, [("enter", False)])
        self.assertEqual(self.prof.started, [])
        self.assertEqual(self.agent.ranges, [])
        self.coll.at_exit()
        self.assertTrue(any("through torch's NVTX ranges" in m for m in self.agent.log))
        self.assertEqual(self.notices(), [])

    def test_by_default_quiet_where_it_does_not_apply(self):
        # not asked for: where it does not apply, the usual way and a line
        # in the agent's log, no notice at the end of every run
        os.environ.pop("PROF_OPS_NVTX")
        for why in ("msprof_tx", "shapes", "old", "cpu"):
            with self.subTest(why=why):
                self.torch.__version__ = "1.13.1" if why == "old" else "2.5.1+cu124"
                self.torch.version.cuda = None if why == "cpu" else "12.4"
                self.setUp_again()
                asked = []
                self.agent.nvtx_ops_begin = lambda: asked.append(1) or (
                    "setting: NVTX is not traced (msprof_tx false)" if why == "msprof_tx"
                    else None)
                flags = A.OPS | A.RECORDING | (A.SHAPES if why == "shapes" else 0)
                self.step(flags)
                self.step(0)
                self.step(flags, 2)
                self.assertEqual(self.nvtx, [])
                self.assertEqual(len(self.prof.started), 2)
                self.assertEqual(self.notices(), [])
                said = [m for m in self.agent.log if m.startswith("operators: the usual way")]
                self.assertEqual(len(said), 1, self.agent.log)
                # a torch without NVTX operator ids or CUDA: the agent is not asked
                self.assertEqual(len(asked), 1 if why == "msprof_tx" else 0)
                self.step(0)
                del self.prof.started[:]

    def test_steps_aside_for_the_programs_profiler(self):
        # the observer off before the program's profiler starts, on again
        # at once after it ended
        REC = A.OPS | A.RECORDING
        self.step(REC)
        self.coll.step_aside("torch.autograd.profiler._prepare_profiler")
        self.assertEqual(self.nvtx, [("enter", False), ("exit", False)])
        self.assertFalse(self.prof.enabled)
        self.step(REC)
        self.assertEqual(len(self.nvtx), 2)           # not while the program's runs
        self.coll.step_back("torch.autograd.profiler._disable_profiler")
        self.assertEqual(self.nvtx[-1], ("enter", False))
        self.assertTrue(self.prof.enabled)
        self.assertEqual(self.prof.started, [])
        self.assertEqual(self.agent.ranges, [])

    def test_saved_flushes_asked_win_over_the_default(self):
        # PROF_OPS_KINETO_SAVE=1 alone: torch's profiler and its own flush
        # files, as asked; with PROF_OPS_NVTX=1 too, NVTX
        os.environ["PROF_OPS_KINETO_SAVE"] = "1"
        self.addCleanup(lambda: os.environ.pop("PROF_OPS_KINETO_SAVE", None))
        self.setUp_again()
        self.step(A.OPS | A.RECORDING)
        self.assertEqual(self.nvtx, [("enter", False)])
        self.step(0)
        os.environ.pop("PROF_OPS_NVTX")
        self.setUp_again()
        self.step(A.OPS | A.RECORDING)
        self.assertEqual(self.nvtx, [("enter", False), ("exit", False)])
        self.assertEqual(len(self.prof.started), 1)
        self.step(0)

    def test_by_default_heard_where_the_environment_rules_it_out(self):
        # not the run's settings nor torch: another NVTX tool, a CUPTI
        # without NVTX; the usual way costs the user more, so a notice
        os.environ.pop("PROF_OPS_NVTX")
        self.setUp_again()
        self.agent.nvtx_ops_begin = lambda: "NVTX_INJECTION64_PATH names another tool"
        self.step(A.OPS | A.RECORDING)
        self.step(0)
        self.step(A.OPS | A.RECORDING, 2)
        self.assertEqual(self.nvtx, [])
        self.assertEqual(len(self.prof.started), 2)
        self.assertEqual(len(self.notices()), 1, self.agent.log)
        self.assertIn("cannot reach prof here (NVTX_INJECTION64_PATH names another tool)",
                      self.notices()[0])
        self.assertNotIn("setting:", "\n".join(self.agent.log))

    def test_ranges_that_never_reach_prof_go_the_usual_way(self):
        # the observer runs, but the agent takes none of its ranges (a torch
        # whose ranges it does not know): after the first recorded step,
        # torch's profiler, and the user hears it
        os.environ.pop("PROF_OPS_NVTX")
        self.setUp_again()
        self.agent.nvtx_ops_seen = lambda: 7          # never more than at the start
        REC = A.OPS | A.RECORDING
        self.step(REC)
        self.assertEqual(self.nvtx, [("enter", False)])
        self.step(REC)                                # the first step ended: checked
        self.assertEqual(self.nvtx, [("enter", False), ("exit", False)])
        self.assertEqual(len(self.prof.started), 1)   # torch's profiler from here on
        self.assertEqual(len(self.notices()), 1, self.agent.log)
        self.assertIn("none of the first recorded step's reached prof", self.notices()[0])
        for _ in range(12):
            self.step(REC)
        self.assertEqual(len(self.nvtx), 2)           # not tried again
        self.assertEqual(len(self.notices()), 1)

    def test_ranges_that_reach_prof_or_cannot_be_counted_stay(self):
        for seen in (itertools.count(), iter([None] * 10)):
            with self.subTest(seen=seen):
                self.setUp_again()
                self.agent.nvtx_ops_seen = lambda: next(seen)
                REC = A.OPS | A.RECORDING
                for _ in range(5):
                    self.step(REC)
                self.assertEqual(self.nvtx[-1], ("enter", False))
                self.assertEqual(self.prof.started, [])
                self.assertEqual(self.notices(), [])
                self.step(0)
                del self.nvtx[:]

    def test_zero_never(self):
        os.environ["PROF_OPS_NVTX"] = "0"
        self.setUp_again()
        self.agent.nvtx_ops_begin = lambda: self.fail("PROF_OPS_NVTX=0 asks nothing")
        self.step(A.OPS | A.RECORDING)
        self.assertEqual(self.nvtx, [])
        self.assertEqual(len(self.prof.started), 1)
        self.assertEqual(self.notices(), [])

    def test_observer_failure_is_heard_by_default_too(self):
        os.environ.pop("PROF_OPS_NVTX")
        self.setUp_again()
        self.enter_fails = "something torch did not expect"
        self.step(A.OPS | A.RECORDING)
        self.assertEqual(len(self.prof.started), 1)
        self.assertEqual(len(self.notices()), 1)
        self.assertIn("did not expect", self.notices()[0])
        self.assertIn("PROF_OPS_NVTX=0", self.notices()[0])

    def setUp_again(self):
        self.agent = FakeAgent()
        self.agent.nvtx_ops_begin = lambda: None
        self.coll = Collector(self.prof, self.prof.empty, self.agent,
                              Guard("operators", self.agent.log), True)


class CollectorWindows(unittest.TestCase):
    def make(self, ns_api=False):
        self.prof = FakeProfilerModule(ns_api)
        self.agent = FakeAgent()
        self.coll = Collector(self.prof, self.prof.empty, self.agent, Guard("operators", self.agent.log),
                              True)
        return self.coll

    def step(self, flags, windows=None):
        """A step ends; the next one has these flags."""
        self.agent.flags = flags
        if windows is not None:
            self.agent.windows = windows
        self.coll.update()

    def op_in_step(self, name="aten::mm", **kw):
        t = time.monotonic_ns()
        self.prof.op(name, t + 1000, t + 5000, **kw)
        time.sleep(0.0001)
        return t + 1000

    def names(self):
        return [o["name"] for o in self.agent.ops]

    def test_warmup_dropped_recorded_kept_window_end_sends(self):
        self.make()
        REC, W = A.OPS | A.RECORDING, A.OPS | A.WARMUP
        self.step(0)                         # import: step 1 waits
        self.assertEqual(self.prof.started, [])
        self.step(W)                         # step 2 warms up: the profiler starts
        self.assertEqual(len(self.prof.started), 1)
        self.op_in_step("warmup-op")
        self.step(REC, 1)                    # step 3 records
        self.op_in_step("rec-op-3")
        self.step(REC, 1)
        self.op_in_step("rec-op-4")
        self.assertEqual(self.agent.ops, [])
        self.step(0, 1)                      # window over: stop and send
        self.assertEqual(self.prof.stops, 1)
        self.assertEqual(self.names(), ["rec-op-3", "rec-op-4"])
        self.assertFalse(self.prof.enabled)

    def test_back_to_back_windows_are_sent_separately(self):
        self.make()
        REC = A.OPS | A.RECORDING
        self.step(REC, 1)
        self.op_in_step("w1")
        self.step(REC, 2)                    # a new window right after: flush at the boundary
        self.assertEqual(self.names(), ["w1"])
        self.op_in_step("w2")
        self.coll.at_exit()
        self.assertEqual(self.names(), ["w1", "w2"])
        self.assertEqual(len(self.prof.started), 2)

    def test_long_window_flushes_every_ten_steps(self):
        self.make()
        REC = A.OPS | A.RECORDING
        self.step(REC, 1)
        for i in range(25):
            self.op_in_step("op-%d" % i)
            self.step(REC, 1)
        self.assertEqual(self.prof.stops, 2)
        self.assertEqual(len(self.agent.ops), 20)
        # each flush is prof's own range on the thread: stop, send, restart inside it
        self.assertEqual(self.agent.ranges, [(b"prof::operators flush", "push"), (None, "pop")] * 2)
        self.coll.at_exit()
        self.assertEqual(self.names(), ["op-%d" % i for i in range(25)])

    def test_device_test_only_when_prof_does_not_hold_cupti(self):
        """On a GPU each event was asked for its device at every flush; when
        prof holds CUPTI, torch's profiler has no device events to find."""
        saved = sys.modules.get("torch")
        sys.modules["torch"] = types.SimpleNamespace(
            cuda=types.SimpleNamespace(is_initialized=lambda: True))
        self.addCleanup(lambda: sys.modules.__setitem__("torch", saved) if saved
                        else sys.modules.pop("torch", None))
        asked = []

        class Dev:
            CPU, CUDA = "cpu", "cuda"

        def device_type(kind):
            asked.append(kind)
            return kind
        for held in (False, True):
            self.make()
            self.agent.holds_cupti = lambda held=held: held
            REC = A.OPS | A.RECORDING
            self.step(REC, 1)
            self.op_in_step("aten::mm")
            for e in self.prof.pending:
                e.device_type = functools.partial(device_type, Dev.CPU)
            del asked[:]
            self.coll.at_exit()
            self.assertIn("aten::mm", self.names())
            self.assertEqual(bool(asked), not held, "held=%s" % held)

    def test_no_ops_bit_no_profiler(self):
        self.make()
        self.step(A.RECORDING, 1)            # activities without CPU: steps only
        self.assertEqual(self.prof.started, [])

    def test_detail_bits_reach_the_profiler(self):
        self.make()
        self.step(A.OPS | A.RECORDING | A.SHAPES, 1)
        self.assertEqual(self.prof.started, [{"record_shapes": True, "with_stack": False}])
        self.step(A.OPS | A.RECORDING | A.STACK, 1)   # changed: restart with the new detail
        self.assertEqual(self.prof.started[-1], {"record_shapes": False, "with_stack": True})

    def test_step_aside_while_the_programs_profiler_runs(self):
        self.make()
        REC = A.OPS | A.RECORDING
        self.step(REC, 1)
        self.op_in_step("before")
        self.coll.step_aside("torch.autograd.profiler._prepare_profiler")
        self.coll.step_aside("torch.autograd.profiler._enable_profiler")   # the same start
        self.assertEqual(self.names(), ["before"])
        self.assertFalse(self.prof.enabled)
        self.step(REC, 1)
        self.step(REC, 1)
        self.assertEqual(len(self.prof.started), 1)   # not while the program's runs
        self.assertIn("prof steps aside while it runs", self.agent.log[-1])
        self.coll.step_back("torch.autograd.profiler._disable_profiler")
        self.assertTrue(self.prof.enabled, "ours starts again at once, not a step later")
        self.assertEqual(len(self.prof.started), 2)
        self.assertIn("prof collects operators again", self.agent.log[-1])
        self.op_in_step("after")
        self.step(REC, 2)                    # the window ends: sent
        self.assertEqual(self.names(), ["before", "after"])
        # a second time: stepped aside again, and said once only
        said = len(self.agent.log)
        self.step(REC, 3)
        self.coll.step_aside("torch.autograd.profiler._prepare_profiler")
        self.assertFalse(self.prof.enabled)
        self.coll.step_back("torch.autograd.profiler._disable_profiler")
        self.assertTrue(self.prof.enabled)
        self.assertFalse([ln for ln in self.agent.log[said:] if "aside" in ln or "again" in ln])

    def test_step_back_follows_the_agent(self):
        self.make()
        self.step(A.OPS | A.RECORDING, 1)
        self.coll.step_aside("torch.autograd.profiler._prepare_profiler")
        self.agent.flags = A.OPS   # recording was switched off meanwhile
        self.coll.step_back("torch.autograd.profiler._disable_profiler")
        self.assertFalse(self.prof.enabled)
        self.step(A.OPS | A.RECORDING, 2)
        self.assertTrue(self.prof.enabled)

    def check_conversion(self, ns_api):
        self.make(ns_api)
        self.step(A.OPS | A.RECORDING | A.SHAPES | A.STACK, 1)
        native = threading.get_native_id()
        t = time.monotonic_ns() + 10_000
        p = self.prof
        p.op("aten::linear", t, t + 50_000, seq=3, shapes=[(4, 8), (8, 8)], dtypes=["float", "float"],
             stack=["train.py(10): forward", "train.py(20): <module>"])
        p.op("aten::addmm", t + 10_000, t + 40_000)
        p.op("autograd::engine::evaluate_function: AddmmBackward0", t + 60_000, t + 90_000)
        p.op("AddmmBackward0", t + 61_000, t + 89_000, scope=1, fwd=1, seq=3)
        p.op("aten::mm", t + 62_000, t + 70_000)
        p.op("Optimizer.step#SGD.step", t + 100_000, t + 120_000, scope=7)
        p.op("aten::add_", t + 101_000, t + 102_000, tid=2)
        self.coll.at_exit()
        ops = {o["name"]: o for o in self.agent.ops}
        self.assertEqual(list(ops), ["aten::linear", "aten::addmm",
                                     "autograd::engine::evaluate_function: AddmmBackward0",
                                     "AddmmBackward0", "aten::mm", "Optimizer.step#SGD.step",
                                     "aten::add_"])
        self.assertNotIn("prof::clock_sync", ops)
        lin = ops["aten::linear"]
        tol = 3000 if not ns_api else 2000  # us truncation in 1.13, the marker's asymmetry
        self.assertLess(abs(lin["start"] - t), tol)
        self.assertLess(abs(lin["end"] - lin["start"] - 50_000), 2000)
        self.assertEqual(lin["tid"], native)
        self.assertEqual(lin["shapes"], "[[4, 8], [8, 8]]")
        self.assertEqual(lin["types"], '["float", "float"]')
        self.assertEqual(lin["stack"], "train.py(10): forward;train.py(20): <module>")
        self.assertEqual(lin["seq"], 3)
        self.assertIsNone(ops["aten::addmm"]["shapes"])
        self.assertEqual(ops["aten::addmm"]["flags"], 0)
        for name in ("autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward0", "aten::mm"):
            self.assertEqual(ops[name]["flags"] & A.OP_BACKWARD, A.OP_BACKWARD, name)
        self.assertEqual(ops["AddmmBackward0"]["fwd"], native)
        self.assertEqual(ops["Optimizer.step#SGD.step"]["flags"], A.OP_USER)
        self.assertEqual(ops["aten::add_"]["tid"], -2, "unknown torch thread: negated id")
        starts = [o["start"] for o in self.agent.ops]
        self.assertEqual(starts, sorted(starts), "the framework stream is in time order")

    def test_conversion_torch_113_us_events(self):
        self.check_conversion(ns_api=False)

    def test_conversion_torch_2x_ns_events(self):
        self.check_conversion(ns_api=True)


    def test_prof_start_stop_mid_step(self):
        self.make()
        REC = A.OPS | A.RECORDING
        self.step(0, 0)
        self.agent.flags, self.agent.windows = REC, 1
        self.coll.update(step_ended=False)   # prof_tx.start() in the middle of a step
        self.assertTrue(self.prof.enabled)
        self.op_in_step("after-start")
        self.agent.flags = 0
        self.coll.update(step_ended=False)   # prof_tx.stop(): sent at once
        self.assertEqual(self.names(), ["after-start"])
        self.assertFalse(self.prof.enabled)


class ExplicitSteps(unittest.TestCase):
    def test_prof_tx_step_turns_optimizer_steps_off(self):
        import _prof_hooks
        agent = FakeAgent()
        agent.steps = []
        agent.step = lambda: agent.steps.append(1)
        agent.log = Log()
        hooks = _prof_hooks.Hooks(None, agent)
        hooks._step_ended()                  # an optimizer step: reported
        self.assertEqual(len(agent.steps), 1)
        hooks.explicit_step()                # the program's own prof_tx.step()
        hooks._step_ended()                  # optimizer steps no longer end steps
        self.assertEqual(len(agent.steps), 1)
        self.assertIn("prof_tx.step()", agent.log[0])


# --- sitecustomize at start-up ----------------------------------------------

class Startup(unittest.TestCase):
    def run_py(self, code, extra_path=(), env_add=None):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("PROF_AGENT_") and k not in ("PYTHONPATH", "LD_PRELOAD")}
        env["PYTHONPATH"] = os.pathsep.join([PYDIR, *extra_path])
        env.update(env_add or {})
        return subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=env,
                              timeout=60)

    def test_inert_without_prof(self):
        out = self.run_py("import sys; print(type(sys.meta_path[0]).__name__, "
                          "'_prof_hooks' in sys.modules)")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertNotIn("_TorchFinder", out.stdout)
        self.assertIn("False", out.stdout)

    def test_chains_to_the_sitecustomize_it_hides(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "sitecustomize.py"), "w") as f:
                f.write("import sys\nCHAINED = True\nprint('chained', file=sys.stderr)\n")
            out = self.run_py("import sys; print(sys.modules['_prof_chained_sitecustomize'].CHAINED)",
                              extra_path=[d])
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "True")
        self.assertEqual(out.stderr.strip(), "chained")

    def test_fake_torch_without_agent_symbols(self):
        # PROF_AGENT_RUN_DIR set but no agent in the process: torch imports fine, no hooks
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "torch"))
            with open(os.path.join(d, "torch", "__init__.py"), "w") as f:
                f.write("__version__ = 'fake'\n")
            out = self.run_py("import sys, torch; print(torch.__version__, "
                              "sys.modules['_prof_hooks']._hooks)",
                              extra_path=[d], env_add={"PROF_AGENT_RUN_DIR": d})
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), "fake None")
        self.assertEqual(out.stderr, "")


if __name__ == "__main__":
    unittest.main()
