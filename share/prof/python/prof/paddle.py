"""paddle.profiler's interface, recording through prof.

    import prof.paddle as profiler
    with profiler.Profiler(scheduler=profiler.make_scheduler(closed=1, ready=1, record=2),
                           on_trace_ready=profiler.export_chrome_tracing("./log")) as p:
        for batch in loader:
            train_step(batch)
            p.step(num_samples=len(batch))
            print(p.step_info(unit="images"))
    p.summary()

The recording is prof.profile's (one recorder: under `prof run` the object
reconfigures the agent, in a plain python it starts one), driven by
paddle's states: CLOSED is torch's wait, READY its warmup, RECORD active,
and RECORD_AND_RETURN the last active step of a cycle, after which
on_trace_ready(self) is called. Steps are the object's step() calls,
counted from 0 at start(); prof numbers them from 1 in its outputs, so
paddle's step k is ProfilerStep#k+1 there.

export_chrome_tracing(dir) gives each window its own result directory,
dir/{worker_name}_{timestamp}_prof/, parsed by prof in the background; the
Chrome trace is its PROFILER_OUTPUT/trace_view.json. Protobuf ("pb") is
not a format prof writes. timer_only=True records nothing: only step_info()
and the "Perf Summary" printed at stop().
"""
import enum
import os

from . import _runtime
from . import profiler as _torch_style
from ._paddle_summary import summary_text
from ._paddle_timer import StepTimer

__all__ = ["Profiler", "ProfilerTarget", "ProfilerState", "SortedKeys", "make_scheduler",
           "export_chrome_tracing", "export_protobuf", "RecordEvent", "load_profiler_result"]


class ProfilerTarget(enum.Enum):
    CPU = 0
    GPU = 1
    XPU = 2
    CUSTOM_DEVICE = 3


class ProfilerState(enum.Enum):
    CLOSED = 0
    READY = 1
    RECORD = 2
    RECORD_AND_RETURN = 3


class SortedKeys(enum.Enum):
    CPUTotal = 0
    CPUAvg = 1
    CPUMax = 2
    CPUMin = 3
    GPUTotal = 4
    GPUAvg = 5
    GPUMax = 6
    GPUMin = 7


_STATE_OF_ACTION = {
    _torch_style.ProfilerAction.NONE: ProfilerState.CLOSED,
    _torch_style.ProfilerAction.WARMUP: ProfilerState.READY,
    _torch_style.ProfilerAction.RECORD: ProfilerState.RECORD,
    _torch_style.ProfilerAction.RECORD_AND_SAVE: ProfilerState.RECORD_AND_RETURN,
}


class _Scheduler(_torch_style._Schedule):
    """make_scheduler's result: step -> ProfilerState, and the five numbers
    prof's agent applies itself."""

    def __call__(self, step):
        return _STATE_OF_ACTION[super().__call__(step)]

    def __repr__(self):
        return "prof.paddle.make_scheduler(closed=%d, ready=%d, record=%d, repeat=%d, " \
               "skip_first=%d)" % (self.wait, self.warmup, self.active, self.repeat,
                                   self.skip_first)


def _count(fn, name, value, least=0):
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise ValueError("prof.paddle.%s: %s: expected an integer >= %d, got %r"
                         % (fn, name, least, value))


def make_scheduler(*, closed, ready, record, repeat=0, skip_first=0):
    """paddle's make_scheduler: skip_first steps CLOSED, then cycles of
    `closed` CLOSED, `ready` READY and `record` RECORD steps (the last one
    RECORD_AND_RETURN), `repeat` times (0: for ever)."""
    for name, v in (("closed", closed), ("ready", ready), ("repeat", repeat),
                    ("skip_first", skip_first)):
        _count("make_scheduler", name, v)
    _count("make_scheduler", "record", record, least=1)
    return _Scheduler(wait=closed, active=record, warmup=ready, repeat=repeat,
                      skip_first=skip_first)


def _scheduler(arg):
    """Profiler's scheduler argument as a _Scheduler, or None (every step
    RECORD, as paddle's default)."""
    if arg is None or isinstance(arg, _Scheduler):
        return arg
    if isinstance(arg, (tuple, list)):
        ok = len(arg) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in arg)
        if not ok or arg[0] < 0 or arg[1] <= arg[0]:
            raise ValueError("prof.paddle.Profiler: scheduler: expected a (start, end) tuple of "
                             "step indices with 0 <= start < end, got %r" % (arg,))
        # paddle's own translation of the tuple: steps [start, end) record,
        # the step before them is READY
        start, end = arg
        return _Scheduler(wait=max(start - 1, 0), warmup=1 if start >= 1 else 0,
                          active=end - start, repeat=1)
    code, cells = getattr(arg, "__code__", None), getattr(arg, "__closure__", None)
    if callable(arg) and code is not None and cells:
        # paddle.profiler.make_scheduler's closure holds the same five numbers
        v = {n: c.cell_contents for n, c in zip(code.co_freevars, cells)}
        if all(isinstance(v.get(k), int) for k in ("closed", "ready", "record")):
            return make_scheduler(closed=v["closed"], ready=v["ready"], record=v["record"],
                                  repeat=v.get("repeat", 0) or 0,
                                  skip_first=v.get("skip_first", 0) or 0)
    raise ValueError("prof.paddle.Profiler: scheduler: expected a (start, end) tuple or a "
                     "make_scheduler(...) (prof's or paddle's); got %r" % (arg,))


def _activities(targets):
    if targets is None:
        return None
    acts = set()
    for t in targets:
        if not isinstance(t, ProfilerTarget):
            raise ValueError("prof.paddle.Profiler: targets: expected ProfilerTarget values "
                             "(CPU, GPU, XPU, CUSTOM_DEVICE), got %r" % (t,))
        acts.add(_torch_style.ProfilerActivity.CPU if t is ProfilerTarget.CPU
                 else _torch_style.ProfilerActivity.CUDA)
    return acts


def export_chrome_tracing(dir_name, worker_name=None):
    """on_trace_ready: each window's result in
    dir_name/{worker_name}_{timestamp}_prof/ (its Chrome trace:
    PROFILER_OUTPUT/trace_view.json), parsed by prof in the background."""
    try:
        os.makedirs(dir_name, exist_ok=True)
    except OSError as e:
        raise RuntimeError("prof.paddle.export_chrome_tracing: cannot make %s: %s"
                           % (dir_name, e))
    return _torch_style.tensorboard_trace_handler(dir_name, worker_name)


_NO_PROTOBUF = "protobuf is not a format prof writes; export Chrome trace JSON instead"


def export_protobuf(dir_name, worker_name=None):
    raise ValueError("prof.paddle.export_protobuf: %s (export_chrome_tracing)" % _NO_PROTOBUF)


def load_profiler_result(file_name):
    raise ValueError("prof.paddle.load_profiler_result: %s; prof's results are directories "
                     "(see `prof stats`)" % _NO_PROTOBUF)


class RecordEvent:
    """A range in the trace (user_annotation), on this thread; nothing when
    no profiler has started in this process."""

    def __init__(self, name, event_type=None):
        self.name = name
        self._rt = None

    def begin(self):
        rt = _runtime.current()
        if rt is not None and self._rt is None:
            rt.range_push(self.name)
            self._rt = rt

    def end(self):
        rt, self._rt = self._rt, None
        if rt is not None:
            rt.range_pop()

    def __enter__(self):
        self.begin()
        return self

    def __exit__(self, *exc):
        self.end()
        return False


def _say_not_applied(emit_nvtx, custom_device_types):
    if emit_nvtx:
        _torch_style._say("emit_nvtx: not applied (prof records its ranges itself; NVTX ranges "
                          "of the program are recorded as they are)")
    if custom_device_types:
        _torch_style._say("custom_device_types: not applied (prof records the devices its "
                          "backends know: CUDA and the simulated device)")


class Profiler:
    """paddle.profiler.Profiler."""

    def __init__(self, *, targets=None, scheduler=None, on_trace_ready=None, timer_only=False,
                 record_shapes=False, profile_memory=False, emit_nvtx=False,
                 custom_device_types=None, with_flops=False):
        acts = _activities(targets)
        self.scheduler = _scheduler(scheduler)
        self.timer_only = bool(timer_only)
        self.profile_memory = bool(profile_memory)
        self.step_num = 0
        self._timer = StepTimer()
        self._not_applied = (emit_nvtx, custom_device_types)
        self._profile = None
        if self.timer_only:
            return
        if on_trace_ready is None:
            on_trace_ready = export_chrome_tracing("./profiler_log/")
        self.on_trace_ready = on_trace_ready

        def ready(_profile):
            on_trace_ready(self)

        ready._prof_dir = getattr(on_trace_ready, "_prof_dir", None)
        self._profile = _torch_style.profile(activities=acts, schedule=self.scheduler,
                                             on_trace_ready=ready, record_shapes=record_shapes,
                                             profile_memory=profile_memory,
                                             with_flops=with_flops)

    # start() on entry, stop() on exit, as prof.profile
    __enter__ = _torch_style.profile.__enter__
    __exit__ = _torch_style.profile.__exit__

    def start(self):
        if self._profile is not None:
            if self._profile._rt is not None:
                raise RuntimeError("prof.paddle.Profiler: start() called twice")
            self._profile.start()
            _say_not_applied(*self._not_applied)
        # after the profile's start: in a plain python that installs prof's
        # DataLoader hooks, which the timer's reader timing then wraps
        self._timer.begin()

    def stop(self):
        if self._profile is not None:
            self._profile.stop()
        self._timer.end()

    def step(self, num_samples=None):
        self._timer.step(num_samples)
        self.step_num += 1
        if self._profile is not None:
            self._profile.step()

    def step_info(self, unit=None):
        """paddle's " reader_cost: X s batch_cost: Y s ips: Z unit/s", averaged
        over the steps since the previous call."""
        return self._timer.step_info(unit or "samples")

    def _request_result(self, out, label):
        return self._profile._request_result(out, label)

    def _recorder(self, what):
        if self._profile is None:
            raise RuntimeError("prof.paddle.Profiler.%s: timer_only=True recorded no trace" % what)
        return self._profile

    def export(self, path="", format="json"):
        """The last window's Chrome trace (trace_view.json) to `path`."""
        if format == "pb":
            raise ValueError("prof.paddle.Profiler.export: format: \"pb\": " + _NO_PROTOBUF)
        if format != "json":
            raise ValueError("prof.paddle.Profiler.export: format: expected \"json\", got %r"
                             % (format,))
        self._recorder("export").export_chrome_trace(path)

    def summary(self, sorted_by=SortedKeys.CPUTotal, op_detail=True, thread_sep=False,
                time_unit="ms"):
        """paddle's tables of the last window, from prof's outputs."""
        if not isinstance(sorted_by, SortedKeys):
            raise ValueError("prof.paddle.Profiler.summary: sorted_by: expected a SortedKeys "
                             "value (CPUTotal, CPUAvg, ... GPUMin), got %r" % (sorted_by,))
        if time_unit not in ("s", "ms", "us", "ns"):
            raise ValueError("prof.paddle.Profiler.summary: time_unit: expected 's', 'ms', 'us' "
                             "or 'ns', got %r" % (time_unit,))
        out = self._recorder("summary")._window_result()
        print(summary_text(out, sorted_by.name, op_detail=op_detail, thread_sep=thread_sep,
                           time_unit=time_unit, memory=self.profile_memory))
