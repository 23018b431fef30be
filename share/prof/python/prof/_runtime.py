"""The one recorder behind every profiler object of this package.

Under `prof run` the agent is already in the process (LD_PRELOAD) and the
launcher parses; the objects only reconfigure it. In a plain `python`, the
first object that starts runs `prof session` (the `prof` binary next to this
package: <prefix>/bin/prof for <prefix>/share/prof/python/prof): it makes
the run directory, samples the host, parses each window's result in the
background, and parses the whole run once this process ends (the pipe it
reads from closes). This process then sets the environment prof session
gives and loads the agent itself, so the processes it starts from then on
are recorded too.

What plain python cannot see that `prof run` sees: processes started before
the first profiler object started (they have no agent), what ran before
that moment, the CUDA calls made before it (a CUDA already initialised is
attached then, as Kineto attaches CUPTI), and a process that leaves by
os._exit is closed as a crash would be.
"""
import atexit
import ctypes
import json
import os
import subprocess
import sys
import time

_PKG = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(_PKG)
# A static prof runs its package from its cache, with no bin/ beside it, and
# says where it is in PROF_EXE (cmd/run.c).
PROF_EXE = os.environ.get("PROF_EXE") or os.path.normpath(
    os.path.join(PYTHON_DIR, "..", "..", "..", "bin", "prof"))

# PROF_FW_* bits of prof_fw_state() (lib/common/agent_env.h)
FW_RECORDING = 0x01
FW_WARMUP = 0x02
FW_OPS = 0x04
FW_SHAPES = 0x08
FW_STACK = 0x10
FW_MEMORY = 0x20
FW_MODULES = 0x40
FW_FLOPS = 0x100

WIN_DIR = "windows"  # lib/run/windows.h


class ProfError(RuntimeError):
    pass


def _bind(lib):
    lib.prof_step.argtypes, lib.prof_step.restype = [], None
    lib.prof_start.argtypes, lib.prof_start.restype = [], None
    lib.prof_stop.argtypes, lib.prof_stop.restype = [], None
    lib.prof_fw_state.argtypes, lib.prof_fw_state.restype = [], ctypes.c_uint64
    lib.prof_fw_step.argtypes, lib.prof_fw_step.restype = [], ctypes.c_uint64
    lib.prof_fw_schedule.argtypes = [ctypes.c_char_p, ctypes.c_uint32]
    lib.prof_fw_schedule.restype = ctypes.c_int
    for name in ("prof_mark", "prof_range_push"):
        getattr(lib, name).argtypes = [ctypes.c_char_p]
    lib.prof_range_pop.argtypes = []
    for name in ("prof_add_metadata", "prof_add_metadata_json"):
        getattr(lib, name).argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    if hasattr(lib, "prof_fw_finish"):
        lib.prof_fw_finish.argtypes, lib.prof_fw_finish.restype = [], None
    return lib


def _b(text):
    return text.encode("utf-8", "replace") if isinstance(text, str) else bytes(text)


class Runtime:
    """The agent of this process, as the objects need it."""

    def __init__(self, lib, run_dir, mode, session=None):
        self.lib = _bind(lib)
        self.run_dir = run_dir
        self.mode = mode            # "run" (prof run) or "session" (plain python)
        self.session = session      # prof session's Popen, in plain python
        self.requests = 0
        self.owner = None           # the profiler object that holds the schedule
        self.device = mode == "run"  # device activity can reach prof

    # -- the agent -------------------------------------------------------
    def step_number(self):
        """The step in progress (1-based)."""
        return int(self.lib.prof_fw_step())

    def state(self):
        s = int(self.lib.prof_fw_state())
        return s & 0xFFFFFFFF, s >> 32

    def recording(self):
        return bool(self.state()[0] & FW_RECORDING)

    def step(self):
        self.lib.prof_step()
        _tell_hooks("explicit_step")

    def start(self):
        self.lib.prof_start()
        _tell_hooks("recording_changed")

    def stop(self):
        self.lib.prof_stop()
        _tell_hooks("recording_changed")

    def schedule(self, spec, fw_flags):
        """spec "skip_first,wait,warmup,active,repeat" or None (every step)."""
        if self.lib.prof_fw_schedule(_b(spec) if spec else None, fw_flags) != 0:
            raise ProfError("prof: the agent refused the schedule %r" % (spec,))
        _tell_hooks("recording_changed")

    def mark(self, text):
        self.lib.prof_mark(_b(text))

    def range_push(self, name):
        self.lib.prof_range_push(_b(name))

    def range_pop(self):
        self.lib.prof_range_pop()

    def add_metadata(self, key, value):
        self.lib.prof_add_metadata(_b(key), _b(str(value)))

    def add_metadata_json(self, key, text):
        self.lib.prof_add_metadata_json(_b(key), _b(text))

    # -- results per window ------------------------------------------------
    def request_window(self, first, last, out, label, export_type=None):
        """Asks the launcher for a result of steps first..last (None, None:
        all this rank recorded) in `out` (None: RUN_DIR/cycles/...).
        Returns the request's path, for wait_window."""
        self.requests += 1
        d = os.path.join(self.run_dir, WIN_DIR)
        os.makedirs(d, exist_ok=True)
        name = "%d.%04d" % (os.getpid(), self.requests)
        req = {"pid": os.getpid(), "window": self.requests, "label": label}
        if first is not None:
            req["steps"] = [first, last]
        if out:
            req["out"] = os.path.abspath(out)
        if export_type:
            req["export_type"] = list(export_type)
        tmp = os.path.join(d, "." + name + ".tmp")
        with open(tmp, "w") as f:
            json.dump(req, f)
        path = os.path.join(d, name + ".req")
        os.rename(tmp, path)
        return path

    def wait_window(self, req, timeout=600.0):
        """The .done of a request: {"status", "out", ...}. Raises ProfError
        when none comes within `timeout` seconds."""
        done = req[:-len(".req")] + ".done"
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                with open(done) as f:
                    return json.load(f)
            except (OSError, ValueError):
                time.sleep(0.05)
        raise ProfError("prof: no result for %s after %.0f s (is the launcher alive? see %s)"
                        % (req, timeout, os.path.join(self.run_dir, "logs")))

    # -- the end (plain python) ----------------------------------------------
    def finish(self):
        """Streams closed, the pipe closed: prof session parses and says so
        on this terminal before the interpreter is gone."""
        s, self.session = self.session, None
        if s is None:
            return
        if hasattr(self.lib, "prof_fw_finish"):
            self.lib.prof_fw_finish()
        try:
            s.stdin.close()
            s.wait()
        except (OSError, KeyboardInterrupt):
            pass


def _tell_hooks(what):
    hooks = sys.modules.get("_prof_hooks")
    if hooks is not None:
        getattr(hooks, what)()


_runtime = None


def current():
    """The runtime when one is up (under prof run, it always is); else None."""
    global _runtime
    if _runtime is None and os.environ.get("PROF_AGENT_RUN_DIR"):
        try:
            lib = ctypes.CDLL(None)
            lib.prof_fw_schedule
            _runtime = Runtime(lib, os.environ["PROF_AGENT_RUN_DIR"], "run")
        except (OSError, AttributeError):
            pass
    return _runtime


def get(options=None, analyse=True, output_path=None, dynamic=None):
    """The runtime, started in this process when there is none: prof session
    with `options` (prof's configuration keys, as PROF_OPTIONS holds them)."""
    global _runtime
    rt = current()
    if rt is not None:
        return rt
    if not os.access(PROF_EXE, os.X_OK):
        raise ProfError("prof: %s not found or not executable: the prof package must stay in "
                        "the share/prof/python of a prof installation or build" % PROF_EXE)
    opts = dict(options or {})
    if output_path:
        opts["output_path"] = output_path
    if not analyse:
        opts["analyse"] = False
    env = dict(os.environ)
    if opts:
        user = json.loads(env["PROF_OPTIONS"]) if env.get("PROF_OPTIONS") else {}
        user.update(opts)
        env["PROF_OPTIONS"] = json.dumps(user)
    try:
        argv = [PROF_EXE, "session"] + (["--dynamic", dynamic] if dynamic else [])
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             env=env, start_new_session=True, close_fds=True)
    except OSError as e:
        raise ProfError("prof: cannot start %s session: %s" % (PROF_EXE, e))
    line = p.stdout.readline()
    p.stdout.close()
    try:
        info = json.loads(line)
    except ValueError:
        p.wait()
        raise ProfError("prof session failed (exit status %s); see the message above" % p.returncode)
    for k, v in info["env"].items():
        os.environ[k] = v
    lib = ctypes.CDLL(info["agent"], mode=ctypes.RTLD_GLOBAL)
    _say_children_before(p.pid)
    attached = _attach_cuda(lib, info["env"])
    _runtime = Runtime(lib, info["run_dir"], "session", p)
    _runtime.device = attached or bool(info["env"].get("CUDA_INJECTION64_PATH"))
    # Registered now, so it runs after the atexit functions registered
    # later (the hooks' last flush of operators).
    atexit.register(_runtime.finish)
    _install_hooks()
    _refresh_prof_tx()
    return _runtime


def _children(pid):
    kids = []
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                kids += [int(k) for k in f.read().split()]
    except (OSError, ValueError):
        pass
    return kids


def _say_children_before(session_pid):
    """Processes this one started before the profiler have no agent: said,
    since their work (DataLoader workers, a server) is missing."""
    kids = [k for k in _children(os.getpid()) if k != session_pid]
    if kids:
        sys.stderr.write("prof: %d process%s started before the profiler (pid %s) %s not "
                         "recorded; start the profiler first, or run under `prof run`\n"
                         % (len(kids), "" if len(kids) == 1 else "es",
                            ", ".join(str(k) for k in kids[:5]) + ("..." if len(kids) > 5 else ""),
                            "is" if len(kids) == 1 else "are"))


def _cuda_mapped():
    try:
        with open("/proc/self/maps") as f:
            return any("/libcuda.so" in line for line in f)
    except OSError:
        return False


def _attach_cuda(lib, env):
    """Device activity, when asked for: a CUDA initialised from now on calls
    the agent's injection entry itself (CUDA_INJECTION64_PATH is set); one
    already initialised (libcuda mapped) is attached here, as Kineto
    attaches CUPTI at run time. The entry runs once whoever calls it."""
    if env.get("PROF_AGENT_DEVICE") != "1" or not env.get("CUDA_INJECTION64_PATH"):
        return False
    entry = getattr(lib, "prof_cuda_attach", None)
    if entry is None or not _cuda_mapped():
        return False
    entry.restype = ctypes.c_int
    entry()
    return True


def _install_hooks():
    """prof's PyTorch hooks, as sitecustomize installs them under prof run."""
    torch = sys.modules.get("torch")
    if torch is None:
        return
    try:
        import _prof_hooks
        _prof_hooks.install(torch)
    except Exception:
        pass


def _refresh_prof_tx():
    """A prof_tx imported before the agent came is a no-op: bind it now."""
    tx = sys.modules.get("prof_tx")
    if tx is not None and tx._lib is None:
        tx._lib = tx._load()
