"""mindspore.Profiler's interface, recording through prof.

    from prof.mindspore import Profiler
    profiler = Profiler(output_path="./profiler_data", start_profile=False)
    for i, batch in enumerate(loader):
        if i == 100:
            profiler.start()
        train_step(batch)
        if i == 200:
            profiler.stop()
    profiler.analyse()       # the result: ./profiler_data/profiler/PROFILER_OUTPUT/

One recorder: the object takes the agent from its construction (under
`prof run` it reconfigures the one the launcher loaded: every step records
while started, the launcher's schedule no longer applies; in a plain
python it starts `prof session`, whose run directory, with the raw data
offline_analyse reads, is made in output_path). start() and stop() switch
recording at once. Steps are prof's: an optimizer's step() in PyTorch (prof's
hooks) or prof_tx.step(); MindSpore's Profiler has no step() of its own.

analyse() stops the recording and writes its result to
output_path/profiler/ (output_path/rank_<r>/profiler/ in a process with a
rank): the steps that ended between start() and stop(), or everything
recorded when no step ended (a program without steps). op_analyse() reads
that result. Keys that only Ascend hardware has are said on stderr and
not applied.
"""
import json
import os
import subprocess
import sys

from . import _runtime
from ._mindspore_ops import op_info
from ._runtime import ProfError

_BOOL_ARGS = ("start_profile", "profile_memory", "profile_communication", "op_time",
              "with_stack", "data_process")
# Seed keys that Ascend hardware alone has: said when set, never applied.
_ASCEND_ONLY = {
    "aicore_metrics": "AI Core metrics exist on Ascend NPUs only",
    "l2_cache": "the L2 cache counters are an Ascend NPU's",
    "hbm_ddr": "HBM/DDR bandwidth counters are an Ascend NPU's",
    "pcie": "PCIe bandwidth counters are read on Ascend NPUs only",
    "parallel_strategy": "parallel strategies are MindSpore graph data; prof records none",
    "sync_enable": "prof times device work from the device's own records, never by "
                   "synchronising with it",
}
_KWARGS = {"aicore_metrics", "l2_cache", "hbm_ddr", "pcie", "parallel_strategy", "sync_enable",
           "profile_framework", "data_simplification"}
_FRAMEWORK_HOST_SYS = {"all": ["cpu", "mem"], "memory": ["mem"], "time": ["cpu"], None: []}


def _say(text):
    sys.stderr.write("prof: %s\n" % text)


def _check_kwargs(kwargs):
    unknown = sorted(set(kwargs) - _KWARGS)
    if unknown:
        raise TypeError("prof.mindspore.Profiler: unknown keyword argument%s: %s"
                        % ("s" if len(unknown) > 1 else "", ", ".join(unknown)))
    for key in ("l2_cache", "hbm_ddr", "pcie", "parallel_strategy", "sync_enable",
                "data_simplification"):
        if key in kwargs and not isinstance(kwargs[key], bool):
            raise TypeError("prof.mindspore.Profiler: %s: expected a bool, got %r"
                            % (key, kwargs[key]))
    metrics = kwargs.get("aicore_metrics", 0)
    if isinstance(metrics, bool) or metrics not in (-1, 0, 1, 2, 3, 4, 5):
        raise ValueError("prof.mindspore.Profiler: aicore_metrics: expected one of -1..5, "
                         "got %r" % (metrics,))
    if kwargs.get("profile_framework", "all") not in _FRAMEWORK_HOST_SYS:
        raise ValueError("prof.mindspore.Profiler: profile_framework: expected \"all\", "
                         "\"time\", \"memory\" or None, got %r" % (kwargs["profile_framework"],))


def _not_applied(kwargs):
    """(key, why) for each Ascend-only key the caller turned on."""
    out = []
    for key, why in _ASCEND_ONLY.items():
        v = kwargs.get(key)
        if key == "aicore_metrics" and key in kwargs and v != -1:
            out.append((key, why))
        elif key != "aicore_metrics" and v is True:
            out.append((key, why))
    return out


def _run_dirs(path):
    """prof run directories (raw/ beside profiler_info.json) under path, to
    a depth of three (path/rank_N/<run>_prof)."""
    found = []
    base = path.rstrip(os.sep).count(os.sep)
    for root, dirs, files in os.walk(path):
        if "raw" in dirs and "profiler_info.json" in files:
            found.append(root)
            dirs[:] = []
        elif root.count(os.sep) - base >= 3:
            dirs[:] = []
    return sorted(found)


def _output_rank():
    """The rank MindSpore names its output directory by (rank_<r>/): RANK_ID,
    MindSpore's own, or the launchers' RANK and the like; -1 for none."""
    for var in ("RANK_ID", "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"):
        v = os.environ.get(var, "")
        if v.isdigit():
            return int(v)
    return -1


class Profiler:
    """mindspore.Profiler."""

    def __init__(self, output_path="./data", start_profile=True, profile_memory=False,
                 profile_communication=False, op_time=True, with_stack=False,
                 data_process=True, timeline_limit=500, **kwargs):
        if not isinstance(output_path, str) or not output_path:
            raise TypeError("prof.mindspore.Profiler: output_path: expected a path (str), "
                            "got %r" % (output_path,))
        args = dict(start_profile=start_profile, profile_memory=profile_memory,
                    profile_communication=profile_communication, op_time=op_time,
                    with_stack=with_stack, data_process=data_process,
                    timeline_limit=timeline_limit)
        for key in _BOOL_ARGS:
            if not isinstance(args[key], bool):
                raise TypeError("prof.mindspore.Profiler: %s: expected a bool, got %r"
                                % (key, args[key]))
        if isinstance(timeline_limit, bool) or not isinstance(timeline_limit, int) or \
                timeline_limit <= 0:
            raise ValueError("prof.mindspore.Profiler: timeline_limit: expected an integer "
                             "> 0 (MB), got %r" % (timeline_limit,))
        _check_kwargs(kwargs)
        self.output_path = os.path.abspath(output_path)
        self.timeline_limit = timeline_limit
        self._started = self._stopped = False
        self._first = self._last = None
        self._rt = _runtime.get(self._options(args, kwargs), analyse=False,
                                output_path=self.output_path)
        if self._rt.owner is not None:
            raise RuntimeError("prof.mindspore.Profiler: another profiler object is running "
                               "in this process; stop it first (one recorder per process)")
        self._rt.owner = self
        for key, why in _not_applied(kwargs):
            _say("%s: not applied (%s)" % (key, why))
        if "profile_framework" in kwargs and self._rt.mode == "run":
            _say("profile_framework: not applied under prof run (the launcher samples the "
                 "host as its own host_sys says)")
        if not data_process:
            _say("data_process=False: not applied (prof's hooks record DataLoader ranges "
                 "always)")
        self._rt.schedule(None, self._fw_flags(args))
        if start_profile:
            self.start()
        else:
            self._rt.stop()

    @staticmethod
    def _fw_flags(args):
        f = 0
        if args["op_time"]:
            f |= _runtime.FW_OPS | _runtime.FW_SHAPES   # MindSpore keeps input shapes
        if args["with_stack"]:
            f |= _runtime.FW_STACK
        if args["profile_memory"]:
            f |= _runtime.FW_MEMORY
        return f

    @staticmethod
    def _options(args, kwargs):
        """prof's configuration keys for a plain python's prof session."""
        o = {"start_paused": not args["start_profile"],
             "activities": ["CPU", "DEVICE"] if args["op_time"] else ["DEVICE"],
             "record_shapes": args["op_time"], "with_stack": args["with_stack"],
             "host_sys": _FRAMEWORK_HOST_SYS[kwargs.get("profile_framework", "all")],
             "timeline_limit": args["timeline_limit"],
             "data_simplification": kwargs.get("data_simplification", True)}
        if args["profile_memory"]:
            o["profile_memory"] = True
        return o

    def start(self):
        if self._started:
            raise RuntimeError("The profiler has already started. Use profiler.start() only "
                               "when start_profile value is set to False.")
        if self._stopped:
            raise RuntimeError("MindSpore Profiling has finished, repeated start and stop "
                               "actions are not supported.")
        self._started = True
        self._first = self._rt.step_number()
        self._rt.start()

    def stop(self):
        if not self._started:
            raise RuntimeError("The profiler has not started, so can not stop. Please call "
                               "the start() method before calling the stop() method.")
        self._rt.stop()
        self._last = self._rt.step_number() - 1
        self._started, self._stopped = False, True
        if self._rt.owner is self:
            self._rt.owner = None

    def result_dir(self):
        """Where analyse() writes and op_analyse() reads."""
        rank = _output_rank()
        if rank >= 0:
            return os.path.join(self.output_path, "rank_%d" % rank, "profiler")
        return os.path.join(self.output_path, "profiler")

    def analyse(self, offline_path=None, pretty=False):
        if offline_path is not None:
            Profiler.offline_analyse(offline_path, pretty=pretty)
            return
        if self._started:
            self.stop()
        if not self._stopped:
            raise RuntimeError("prof.mindspore.Profiler.analyse: the profiler never started: "
                               "nothing was recorded")
        out = self.result_dir()
        first, last = (self._first, self._last) if self._last >= self._first else (None, None)
        req = self._rt.request_window(first, last, out, "prof.mindspore analyse")
        done = self._rt.wait_window(req)
        if done.get("status") == 4:
            raise ProfError("prof: analyse(): the result could not be written: %s"
                            % done.get("error", "see the run's logs"))
        trace = os.path.join(out, "PROFILER_OUTPUT", "trace_view.json")
        if pretty and os.path.exists(trace):
            _indent(trace)
        self._say_over_limit(trace)
        _say("analyse: %s in %s" % ("steps %d-%d" % (first, last) if first else
                                     "everything recorded (no step ended)", out))

    def _say_over_limit(self, trace):
        try:
            mb = os.path.getsize(trace) / float(1 << 20)
        except OSError:
            return
        if mb > self.timeline_limit:
            _say("timeline_limit: not applied to analyse()'s result, which is written whole "
                 "(trace_view.json: %.0f MB); offline_analyse applies it" % mb)

    def op_analyse(self, op_name, device_id=None):
        """MindSpore's JSON text for op_name (str or list) from analyse()'s
        result."""
        if device_id is not None and (isinstance(device_id, bool) or
                                      not isinstance(device_id, int)):
            raise TypeError("For 'Profiler.op_analyse()', the parameter device_id must be "
                            "int, but got type %s" % type(device_id))
        if not isinstance(op_name, (str, list)):
            raise TypeError("For 'Profiler.op_analyse()', the parameter op_name must be str "
                            "or list, but got type %s" % type(op_name))
        if not op_name:
            raise TypeError("For 'Profiler.op_analyse()', the parameter op_name cannot be "
                            "\"\", '' or [].")
        out = self.result_dir()
        if not os.path.isdir(os.path.join(out, "PROFILER_OUTPUT")):
            raise RuntimeError("No profiler file is found in the path <%s>. Check whether the "
                               "profiler path is correct (call analyse() first)." % out)
        return op_info(out, [op_name] if isinstance(op_name, str) else op_name, device_id)

    @staticmethod
    def offline_analyse(path, pretty=False, step_list=None, data_simplification=True):
        """`prof parse` of each run directory under path (run dirs of a plain
        python's Profiler are made in its output_path); results in each
        one's PROFILER_OUTPUT/."""
        if step_list is not None:
            if not isinstance(step_list, list) or not step_list or not all(
                    isinstance(s, int) and not isinstance(s, bool) and s >= 1
                    for s in step_list):
                raise ValueError("prof.mindspore.Profiler.offline_analyse: step_list: "
                                 "expected a list of step numbers (>= 1), got %r"
                                 % (step_list,))
            if sorted(step_list) != list(range(min(step_list), max(step_list) + 1)):
                raise ValueError("prof.mindspore.Profiler.offline_analyse: step_list: the "
                                 "steps must be consecutive, got %r" % (step_list,))
        dirs = _run_dirs(os.path.abspath(path))
        if not dirs:
            raise RuntimeError("prof.mindspore.Profiler.offline_analyse: no prof run "
                               "directory with raw data under %s%s" % (path, _simplified(path)))
        argv = [_runtime.PROF_EXE, "parse"]
        if pretty:
            argv.append("--pretty")
        if step_list:
            argv += ["--step-list", ",".join(str(s) for s in sorted(step_list))]
        if data_simplification:
            argv.append("--data-simplification")
        for d in dirs:
            rc = subprocess.run(argv + _recorded_limit(d) + [d]).returncode
            if rc == 4 or rc == 2:
                raise RuntimeError("prof.mindspore.Profiler.offline_analyse: prof parse %s "
                                   "failed (exit status %d; see above)" % (d, rc))


def _simplified(path):
    """Why there is no raw data, when an earlier parse removed it."""
    for root, dirs, files in os.walk(path):
        if "raw.removed" in files:
            return " (%s/raw was removed by data_simplification after its parse)" % root
    return ""


def _recorded_limit(run_dir):
    """--timeline-limit as the run was recorded with (a Profiler's
    timeline_limit, MS_PROFILER_OPTIONS, PROF_OPTIONS), else nothing."""
    try:
        with open(os.path.join(run_dir, "profiler_info.json")) as f:
            mb = json.load(f).get("config", {}).get("timeline_limit")
    except (OSError, ValueError, AttributeError):
        return []
    return ["--timeline-limit", str(mb)] if isinstance(mb, int) and mb > 0 else []


def _indent(path):
    with open(path) as f:
        data = json.load(f)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)
