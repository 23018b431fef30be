"""The Python hooks' rules that a real GPU with torch 2.x taught
(test/gpu/README), checked without either: which profiler starts ask for
device activity, Kineto's log level put back after prof's first start,
device events kept out of the operators, torch threads onto OS threads."""
import os
import sys
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "share", "prof", "python"))
from _prof_hooks import aside, ops  # noqa: E402


class Activity:
    """torch._C._profiler.ProfilerActivity's members print as
    'ProfilerActivity.CUDA' and have .name 'CUDA'."""

    def __init__(self, name):
        self.name = name


class DeviceType:
    """torch's DeviceType enum: members are instances with the class's CPU."""


DeviceType.CPU, DeviceType.CUDA = DeviceType(), DeviceType()


class Event:
    def __init__(self, dev):
        self.dev = dev

    def device_type(self):
        return self.dev


class DeviceActivity(unittest.TestCase):
    def test_cuda_asked(self):
        cfg = object()
        self.assertTrue(aside.device_activity((cfg, {Activity("CPU"), Activity("CUDA")}), {}))
        self.assertTrue(aside.device_activity((cfg,), {"activities": [Activity("XPU")]}))

    def test_cpu_only_or_legacy(self):
        self.assertFalse(aside.device_activity((object(), {Activity("CPU")}), {}))
        self.assertFalse(aside.device_activity((object(),), {}))   # _enable_profiler_legacy
        self.assertFalse(aside.device_activity((object(), 3), {}))  # not a set: no guess

    def test_watch_calls_back_first_and_passes_ours(self):
        calls = []

        Mod = types.ModuleType("torch.autograd")

        def _prepare_profiler(cfg, acts):
            calls.append("torch")
            return "prepared"

        def _disable_profiler():
            calls.append("torch off")
            return "results"

        Mod._prepare_profiler = _prepare_profiler
        Mod._disable_profiler = _disable_profiler
        Mod.__name__ = "torch.autograd"
        torch = types.SimpleNamespace(autograd=Mod)
        aside.watch(torch, Mod, lambda what, dev: calls.append((what, dev)),
                    lambda what: calls.append(("ended", what)))
        self.assertEqual(Mod._prepare_profiler(None, {Activity("CUDA")}), "prepared")
        self.assertEqual(calls, [("torch.autograd._prepare_profiler", True), "torch"])
        self.assertEqual(Mod._disable_profiler(), "results")   # told after it returned
        self.assertEqual(calls[-2:], ["torch off", ("ended", "torch.autograd._disable_profiler")])
        del calls[:]
        aside.ours.on = True
        try:
            Mod._prepare_profiler(None, {Activity("CUDA")})
            Mod._disable_profiler()
        finally:
            aside.ours.on = False
        self.assertEqual(calls, ["torch", "torch off"])   # prof's own: no callback
        wrapped = Mod._prepare_profiler
        aside.watch(torch, Mod, None, None)   # wrapped once only
        self.assertIs(Mod._prepare_profiler, wrapped)
        self.assertTrue(wrapped._prof_watch)


class KinetoQuiet(unittest.TestCase):
    def test_put_back(self):
        os.environ.pop("KINETO_LOG_LEVEL", None)
        q = ops._KinetoQuiet()
        self.assertEqual(os.environ.get("KINETO_LOG_LEVEL"), ops._kineto_errors_level())
        q.restore()
        self.assertNotIn("KINETO_LOG_LEVEL", os.environ)

    def test_errors_level_by_torch(self):
        """torch 2.x's Kineto has STAGE at 3 ("Completed Stage: Warm Up"
        at every start and stop, seen on an H100 with torch 2.11): errors
        are 4 there."""
        saved = sys.modules.get("torch")
        try:
            for version, level in (("1.13.1", "3"), ("2.11.0+cu130", "4"), ("2.0.0", "4"),
                                   ("weird", "4")):
                sys.modules["torch"] = types.SimpleNamespace(__version__=version)
                self.assertEqual(ops._kineto_errors_level(), level, version)
        finally:
            if saved is not None:
                sys.modules["torch"] = saved
            else:
                sys.modules.pop("torch", None)

    def test_program_choice_kept(self):
        os.environ["KINETO_LOG_LEVEL"] = "0"
        try:
            ops._KinetoQuiet().restore()
            self.assertEqual(os.environ.get("KINETO_LOG_LEVEL"), "0")
        finally:
            os.environ.pop("KINETO_LOG_LEVEL", None)


class DeviceEvents(unittest.TestCase):
    def with_torch(self, cuda_started):
        fake = types.SimpleNamespace(cuda=types.SimpleNamespace(
            is_initialized=lambda: cuda_started))
        saved = sys.modules.get("torch")
        sys.modules["torch"] = fake
        self.addCleanup(lambda: sys.modules.__setitem__("torch", saved) if saved
                        else sys.modules.pop("torch", None))

    def test_kernels_are_not_operators(self):
        self.with_torch(True)
        test = ops._device_event_test(Event(DeviceType.CPU))
        self.assertFalse(test(Event(DeviceType.CPU)))
        self.assertTrue(test(Event(DeviceType.CUDA)))

    def test_no_cuda_no_test(self):
        self.with_torch(False)   # no device events can come: not paid for
        self.assertIsNone(ops._device_event_test(Event(DeviceType.CPU)))

    def test_old_torch(self):
        self.assertIsNone(ops._device_event_test(object()))


class Threads(unittest.TestCase):
    def test_os_tid_from_torch(self):
        logged = []
        c = ops.Collector.__new__(ops.Collector)
        c.agent = type("A", (), {"log": staticmethod(logged.append)})()
        self.assertEqual(c._os_tid(3, 710), 710)
        self.assertEqual(logged, ["torch thread 3 is OS thread 710"])
        self.assertEqual(c._os_tid(3, 0), -3)          # torch 1.13: unknown
        self.assertEqual(c._os_tid(4, 1 << 40), -4)    # not a tid


if __name__ == "__main__":
    unittest.main()
