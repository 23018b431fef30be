"""torch.profiler / torch_npu.profiler's interface, recording through prof.

    import prof
    with prof.profile(schedule=prof.schedule(wait=1, warmup=1, active=2, repeat=1),
                      on_trace_ready=prof.tensorboard_trace_handler("./result")) as p:
        for batch in loader:
            train_step(batch)
            p.step()

One recorder: under `prof run` the object reconfigures the agent the
launcher loaded (its schedule and collectors replace the launcher's from
start() on, and after stop() nothing more is recorded in this process); in a
plain python it starts one (see _runtime). Steps are the object's step()
calls from start() on, as in torch; the schedule counts them from 0 at
start(). Each window that ends (the last active step of a cycle, or stop()
while recording) calls on_trace_ready(self); tensorboard_trace_handler's
result directory is parsed by prof in the background.
"""
import enum
import os
import shutil
import socket
import sys
import time

from . import _runtime
from ._runtime import ProfError
from .stacks import write_folded


class ProfilerActivity(enum.Enum):
    CPU = "CPU"
    CUDA = "DEVICE"
    NPU = "DEVICE"   # an alias of CUDA: the device, whichever it is
    GPU = "DEVICE"


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


class ProfilerLevel:
    Level_none = "Level_none"
    Level0 = "Level0"
    Level1 = "Level1"
    Level2 = "Level2"


class ExportType:
    Text = "text"
    Db = "db"


class AiCMetrics:
    AiCoreNone = "AiCoreNone"
    PipeUtilization = "PipeUtilization"
    ArithmeticUtilization = "ArithmeticUtilization"
    Memory = "Memory"
    MemoryL0 = "MemoryL0"
    ResourceConflictRatio = "ResourceConflictRatio"
    MemoryUB = "MemoryUB"
    L2Cache = "L2Cache"


def supported_activities():
    return {ProfilerActivity.CPU, ProfilerActivity.CUDA}


def supported_profiler_level():
    return {ProfilerLevel.Level_none, ProfilerLevel.Level0, ProfilerLevel.Level1,
            ProfilerLevel.Level2}


def supported_export_type():
    return {ExportType.Text, ExportType.Db}


def _say(text):
    sys.stderr.write("prof: %s\n" % text)


class ExperimentalConfig:
    """torch_npu's _ExperimentalConfig. Keys that prof cannot apply on this
    machine (AI Core metrics, L2 cache, operator attributes: NPU hardware)
    are said once, on stderr, when the profiler starts."""

    def __init__(self, profiler_level=ProfilerLevel.Level0, aic_metrics=AiCMetrics.AiCoreNone,
                 l2_cache=False, op_attr=False, data_simplification=True, record_op_args=False,
                 export_type=None, msprof_tx=False, gc_detect=False, host_sys=None,
                 mstx_domain_include=None, mstx_domain_exclude=None, sys_io=False,
                 sys_interconnection=False):
        if profiler_level not in supported_profiler_level():
            raise ValueError("prof: experimental_config profiler_level: expected one of %s, "
                             "got %r" % (sorted(supported_profiler_level()), profiler_level))
        if export_type is None:
            export_type = [ExportType.Text]
        elif isinstance(export_type, str):
            export_type = [export_type]
        for e in export_type:
            if e not in supported_export_type():
                raise ValueError("prof: experimental_config export_type: expected "
                                 "ExportType.Text or ExportType.Db, got %r" % (e,))
        if mstx_domain_include and mstx_domain_exclude:
            raise ValueError("prof: experimental_config: mstx_domain_include and "
                             "mstx_domain_exclude exclude each other")
        self.profiler_level = profiler_level
        self.aic_metrics = aic_metrics
        self.l2_cache = bool(l2_cache)
        self.op_attr = bool(op_attr)
        self.data_simplification = bool(data_simplification)
        self.record_op_args = bool(record_op_args)
        self.export_type = list(export_type)
        self.msprof_tx = bool(msprof_tx)
        self.gc_detect = bool(gc_detect)
        self.host_sys = list(host_sys or [])
        self.mstx_domain_include = list(mstx_domain_include or [])
        self.mstx_domain_exclude = list(mstx_domain_exclude or [])
        self.sys_io = bool(sys_io)
        self.sys_interconnection = bool(sys_interconnection)

    def not_applied(self):
        """(key, why) for each key set that prof cannot apply here."""
        out = []
        if self.aic_metrics != AiCMetrics.AiCoreNone:
            out.append(("aic_metrics", "AI Core metrics exist on Ascend NPUs only"))
        if self.l2_cache:
            out.append(("l2_cache", "the L2 cache counters are an Ascend NPU's"))
        if self.op_attr:
            out.append(("op_attr", "operator attributes are read from aclnn on Ascend only"))
        if self.record_op_args:
            out.append(("record_op_args", "operator arguments are dumped by CANN only"))
        if self.sys_interconnection:
            out.append(("sys_interconnection", "HCCS/PCIe counters are an Ascend NPU's"))
        if self.sys_io:
            out.append(("sys_io", "NIC/RoCE counters are an Ascend NPU's"))
        return out

    def options(self):
        """prof's configuration keys (PROF_OPTIONS) for a plain python."""
        o = {"export_type": self.export_type, "data_simplification": self.data_simplification}
        if self.host_sys:
            o["host_sys"] = list(self.host_sys)
        return o


_ExperimentalConfig = ExperimentalConfig


class _Schedule:
    """torch's schedule(): callable step -> ProfilerAction, which prof's
    agent applies itself (no Python on the step's path)."""

    def __init__(self, wait, active, warmup=0, repeat=0, skip_first=0):
        for name, v in (("wait", wait), ("active", active), ("warmup", warmup),
                        ("repeat", repeat), ("skip_first", skip_first)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError("prof.schedule: %s: expected an integer >= 0, got %r"
                                 % (name, v))
        if active < 1:
            raise ValueError("prof.schedule: active: expected an integer >= 1, got %r" % active)
        self.wait, self.active, self.warmup = wait, active, warmup
        self.repeat, self.skip_first = repeat, skip_first

    def spec(self):
        return "%d,%d,%d,%d,%d" % (self.skip_first, self.wait, self.warmup, self.active,
                                   self.repeat)

    def __call__(self, step):
        if step < self.skip_first:
            return ProfilerAction.NONE
        step -= self.skip_first
        cycle = self.wait + self.warmup + self.active
        if self.repeat > 0 and step // cycle >= self.repeat:
            return ProfilerAction.NONE
        m = step % cycle
        if m < self.wait:
            return ProfilerAction.NONE
        if m < self.wait + self.warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if m < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    def __repr__(self):
        return "prof.schedule(wait=%d, warmup=%d, active=%d, repeat=%d, skip_first=%d)" % (
            self.wait, self.warmup, self.active, self.repeat, self.skip_first)


def schedule(wait, active, warmup=0, repeat=0, skip_first=0):
    """torch.profiler.schedule's semantics (keyword or positional)."""
    return _Schedule(wait, active, warmup, repeat, skip_first)


def _schedule_spec(fn):
    """The agent's form of a schedule: ours, torch's or torch_npu's schedule()
    (their closures hold the same five numbers), else None."""
    if fn is None:
        return None
    if isinstance(fn, _Schedule):
        return fn.spec()
    code, cells = getattr(fn, "__code__", None), getattr(fn, "__closure__", None)
    if code is not None and cells:
        v = {n: c.cell_contents for n, c in zip(code.co_freevars, cells)}
        if all(isinstance(v.get(k), int) for k in ("wait", "warmup", "active")):
            return _Schedule(v["wait"], v["active"], v["warmup"], v.get("repeat", 0) or 0,
                             v.get("skip_first", 0) or 0).spec()
    raise ValueError("prof.profile: schedule: prof applies schedules made by prof.schedule, "
                     "torch.profiler.schedule or torch_npu.profiler.schedule (wait, warmup, "
                     "active, repeat, skip_first); got %r" % (fn,))


def _worker_name(worker_name):
    return worker_name or "%s_%d" % (socket.gethostname(), os.getpid())


def tensorboard_trace_handler(dir_name=None, worker_name=None, analyse_flag=True):
    """on_trace_ready: each window's result in
    dir_name/{worker_name}_{timestamp}_prof/ (PROFILER_OUTPUT and
    profiler_info.json), parsed by prof in the background. With
    analyse_flag=False the raw data is kept in the run directory and
    nothing is parsed for the window."""
    base = os.path.abspath(dir_name or os.environ.get("ASCEND_WORK_PATH") or "./")

    def handler(p):
        if not analyse_flag:
            return
        stamp = time.strftime("%Y%m%d%H%M%S", time.localtime()) + "%03d" % (
            int(time.time() * 1000) % 1000)
        out = os.path.join(base, "%s_%s_prof" % (_worker_name(worker_name), stamp))
        p._request_result(out, "tensorboard_trace_handler")

    handler._prof_dir = base
    handler._prof_analyse = analyse_flag
    return handler


class profile:
    """torch.profiler.profile / torch_npu.profiler.profile."""

    def __init__(self, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, use_cuda=None):
        acts = set(activities) if activities is not None else supported_activities()
        for a in acts:
            if not isinstance(a, ProfilerActivity):
                raise ValueError("prof.profile: activities: expected ProfilerActivity values "
                                 "(CPU, CUDA, NPU, GPU), got %r" % (a,))
        if use_cuda:
            acts.add(ProfilerActivity.CUDA)
        if experimental_config is not None and not isinstance(experimental_config,
                                                              ExperimentalConfig):
            raise ValueError("prof.profile: experimental_config: expected "
                             "prof.ExperimentalConfig, got %r" % (experimental_config,))
        self.activities = acts
        self._spec = _schedule_spec(schedule)
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.experimental_config = experimental_config or ExperimentalConfig()
        self.step_num = 0
        self._rt = None
        self._window_first = None   # the first step of the window recording now
        self._windows = 0
        self._results = []           # request paths, in order
        self._result_window = 0      # the window the last request is for
        self._last_window = None     # (first, last) steps of the last window ended
        self._metadata = []

    # -- the collectors ---------------------------------------------------
    def _fw_flags(self):
        f = 0
        if ProfilerActivity.CPU in self.activities:
            f |= _runtime.FW_OPS
        if self.record_shapes:
            f |= _runtime.FW_SHAPES
        if self.with_stack:
            f |= _runtime.FW_STACK
        if self.profile_memory:
            f |= _runtime.FW_MEMORY
        if self.with_modules:
            f |= _runtime.FW_MODULES
        if self.with_flops:
            f |= _runtime.FW_FLOPS | _runtime.FW_SHAPES   # FLOPs are counted from shapes
        return f

    def _options(self):
        o = self.experimental_config.options()
        o["activities"] = sorted({a.value for a in self.activities})
        o["record_shapes"] = bool(self.record_shapes)
        o["with_stack"] = bool(self.with_stack)
        return o

    def _say_not_applied(self):
        for key, why in self.experimental_config.not_applied():
            _say("experimental_config %s: not applied (%s)" % (key, why))
        if self._rt.mode == "session" and ProfilerActivity.CUDA in self.activities and \
                _runtime._cuda_mapped() and not self._rt.device:
            _say("device activity is not recorded: this prof was built without CUDA "
                 "support, or device activity is off")

    # -- torch's interface ----------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        if self._rt is not None:
            raise RuntimeError("prof.profile: start() called twice")
        handler = self.on_trace_ready
        out_dir = getattr(handler, "_prof_dir", None)
        self._rt = _runtime.get(self._options(), output_path=out_dir,
                                analyse=handler is None)
        if self._rt.owner is not None and self._rt.owner is not self:
            raise RuntimeError("prof.profile: another profiler object is running in this "
                               "process; stop it first (one recorder per process)")
        self._rt.owner = self
        self._say_not_applied()
        self._rt.schedule(self._spec, self._fw_flags())
        self._rt.start()
        _tell_hooks_explicit()
        for key, value, is_json in self._metadata:
            self._add_metadata(key, value, is_json)
        self._after_boundary(was_recording=False, windows=None)

    def stop(self):
        rt = self._rt
        if rt is None or rt.owner is not self:
            return
        if self._window_first is not None:
            self._window_ends(rt.step_number() - 1)
        rt.stop()
        rt.owner = None

    def step(self):
        rt = self._rt
        if rt is None or rt.owner is not self:
            return
        flags, windows = rt.state()
        rt.step()
        self.step_num += 1
        self._after_boundary(bool(flags & _runtime.FW_RECORDING), windows)

    def _after_boundary(self, was_recording, windows):
        flags, now_windows = self._rt.state()
        recording = bool(flags & _runtime.FW_RECORDING)
        ended = was_recording and (not recording or now_windows != windows)
        if ended and self._window_first is not None:
            self._window_ends(self._rt.step_number() - 1)
        if recording and (self._window_first is None):
            self._window_first = self._rt.step_number()

    def _window_ends(self, last):
        first, self._window_first = self._window_first, None
        self._windows += 1
        self._last_window = (first, last) if last >= first else (None, None)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _request_result(self, out, label):
        first, last = self._last_window or (None, None)
        export = list(self.experimental_config.export_type)
        if label == "export" and ExportType.Text not in export:
            export.append(ExportType.Text)   # export_chrome_trace reads the trace
        req = self._rt.request_window(first, last, out, "prof.profile " + label, export)
        self._results.append(req)
        self._result_window = self._windows
        return req

    # -- results ------------------------------------------------------------
    def _window_result(self, timeout=600.0):
        """The last window's result directory, parsed now if no handler asked."""
        if self._rt is None:
            raise RuntimeError("prof.profile: the profiler has not started")
        # A handler that exports (rather than requesting a result) asks for
        # each window's own result, not the previous window's.
        if not self._results or self._result_window != self._windows:
            if self._last_window is None:
                first = self._window_first
                self._last_window = (first, self._rt.step_number() - 1) \
                    if first is not None and self._rt.step_number() - 1 >= first else (None, None)
            out = os.path.join(self._rt.run_dir, "exports", "%d.%d" % (os.getpid(),
                                                                         self._windows))
            self._request_result(out, "export")
        done = self._rt.wait_window(self._results[-1], timeout)
        if done.get("status") == 4:
            raise ProfError("prof: the window's result could not be written: %s"
                            % done.get("error", "see the run's logs"))
        return done["out"]

    def export_chrome_trace(self, path):
        """The last window's trace_view.json (Chrome/Perfetto JSON) to `path`."""
        out = self._window_result()
        src = os.path.join(out, "PROFILER_OUTPUT", "trace_view.json")
        if path.endswith(".gz"):
            import gzip
            with open(src, "rb") as f, gzip.open(path, "wb") as g:
                shutil.copyfileobj(f, g)
        else:
            shutil.copyfile(src, path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Folded stacks of the last window (with_stack=True), one line per
        stack: "frame;frame;operator weight", weight in microseconds, for
        flamegraph.pl or speedscope."""
        if metric not in ("self_cpu_time_total", "self_cuda_time_total", "self_npu_time_total"):
            raise ValueError("prof.profile.export_stacks: metric: expected self_cpu_time_total "
                             "or self_cuda_time_total, got %r" % (metric,))
        out = self._window_result()
        return write_folded(os.path.join(out, "PROFILER_OUTPUT", "trace_view.json"), path,
                            device=metric != "self_cpu_time_total")

    def add_metadata(self, key, value):
        self._add_metadata(key, value, False)

    def add_metadata_json(self, key, value):
        self._add_metadata(key, value, True)

    def _add_metadata(self, key, value, is_json):
        if not isinstance(key, str) or not isinstance(value, str):
            raise ValueError("prof.profile.add_metadata: key and value must be str")
        if self._rt is None:
            self._metadata.append((key, value, is_json))
        elif is_json:
            self._rt.add_metadata_json(key, value)
        else:
            self._rt.add_metadata(key, value)


def _tell_hooks_explicit():
    """From start() on, the object's step() calls are the steps, as in torch:
    optimizer steps no longer end them."""
    hooks = sys.modules.get("_prof_hooks")
    if hooks is not None:
        hooks.explicit_step()
