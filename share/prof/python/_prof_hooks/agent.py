"""The preloaded agent, seen through ctypes.

Only what the hooks need: steps, ranges, the framework state and stream,
and the agent's log. `load()` returns None when the program does not run
under prof (no PROF_AGENT_RUN_DIR, or no agent in the process); then the
hooks install nothing.
"""
import ctypes
import os

# PROF_FW_* bits of prof_fw_state() (lib/common/agent_env.h)
RECORDING = 0x01
WARMUP = 0x02
OPS = 0x04
SHAPES = 0x08
STACK = 0x10
MEMORY = 0x20
MODULES = 0x40
DETAIL = SHAPES | STACK | MEMORY | MODULES

# raw_op flags (lib/raw/raw_format.h)
OP_BACKWARD = 0x1
OP_USER = 0x2  # a user annotation (record_function): see the report to the lead


class Agent:
    def __init__(self, lib):
        self._lib = lib
        self.step = lib.prof_step
        self.step.argtypes, self.step.restype = [], None
        self.range_push = lib.prof_range_push
        self.range_push.argtypes, self.range_push.restype = [ctypes.c_char_p], None
        self.range_pop = lib.prof_range_pop
        self.range_pop.argtypes, self.range_pop.restype = [], None
        self.mark = lib.prof_mark
        self.mark.argtypes, self.mark.restype = [ctypes.c_char_p], None
        self.has_fw = hasattr(lib, "prof_fw_state") and hasattr(lib, "prof_fw_op")
        if self.has_fw:
            self._state = lib.prof_fw_state
            self._state.argtypes, self._state.restype = [], ctypes.c_uint64
            self.fw_op = lib.prof_fw_op
            self.fw_op.argtypes = [ctypes.c_int32, ctypes.c_uint64, ctypes.c_uint64,
                                   ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                   ctypes.c_char_p, ctypes.c_uint32, ctypes.c_int64,
                                   ctypes.c_int32]
            self.fw_op.restype = ctypes.c_int
        self._log = getattr(lib, "prof_fw_log", None)
        if self._log is not None:
            self._log.argtypes, self._log.restype = [ctypes.c_char_p], None

    def state(self):
        """(PROF_FW_* flags of the step in progress, windows begun so far)."""
        if not self.has_fw:
            return 0, 0
        s = self._state()
        return s & 0xFFFFFFFF, s >> 32

    def log(self, msg):
        """A line in the run's logs/agent-<pid>.log; never the program's stderr."""
        if self._log is not None:
            try:
                self._log(("python hooks: " + msg).encode("utf-8", "replace"))
            except Exception:
                pass


def load():
    if not os.environ.get("PROF_AGENT_RUN_DIR"):
        return None
    try:
        lib = ctypes.CDLL(None)  # the preloaded agent's symbols are global
        return Agent(lib)
    except (OSError, AttributeError):
        return None
