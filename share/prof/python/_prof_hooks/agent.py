"""The preloaded agent, seen through ctypes.

Only what the hooks need: steps, ranges, the framework state and stream,
garbage collections, and the agent's log. `load()` returns None when the program does not run
under prof (no PROF_AGENT_RUN_DIR, or no agent in the process); then the
hooks install nothing.
"""
import ctypes
import os
import struct

# PROF_FW_* bits of prof_fw_state() (lib/common/agent_env.h)
RECORDING = 0x01
WARMUP = 0x02
OPS = 0x04
SHAPES = 0x08
STACK = 0x10
MEMORY = 0x20
MODULES = 0x40
GC = 0x80  # gc_detect (passed in PROF_AGENT_FW_FLAGS; not in prof_fw_state)
FLOPS = 0x100
DETAIL = SHAPES | STACK | MEMORY | MODULES | FLOPS

# raw_op flags (lib/raw/raw_format.h)
OP_BACKWARD = 0x1
OP_USER = 0x2  # a user annotation (record_function): see the report to the lead


# prof_fw_ops' record head (platform/agent/agent_fw.c, struct fw_op_head):
# tid, start_ns, end_ns, flags, seq, fwd_tid, the byte lengths (NUL
# included; 0: absent) of name, shapes, types and stack, which follow the
# head, and the operator's FLOPs (with_flops; 0: none).
OP_HEAD = struct.Struct("<iQQIqiIIIIQ")


def pack_op(tid, start, end, name, shapes, types, stack, flags, seq, fwd, flops=0):
    """One operator for Agent.fw_ops; the strings are bytes ending in NUL
    (or None), the name required."""
    return b"".join((OP_HEAD.pack(tid, start, end, flags, seq, fwd, len(name),
                                  len(shapes) if shapes else 0, len(types) if types else 0,
                                  len(stack) if stack else 0, flops),
                     name, shapes or b"", types or b"", stack or b""))


def unpack_ops(buf):
    """pack_op's records back, as dicts with str values (for tests)."""
    out, at = [], 0
    while at + OP_HEAD.size <= len(buf):
        tid, start, end, flags, seq, fwd, *lens, flops = OP_HEAD.unpack_from(buf, at)
        at += OP_HEAD.size
        strs = []
        for n in lens:
            strs.append(buf[at:at + n - 1].decode() if n else None)
            at += n
        out.append(dict(tid=tid, start=start, end=end, name=strs[0], shapes=strs[1],
                        types=strs[2], stack=strs[3], flags=flags, seq=seq, fwd=fwd,
                        flops=flops))
    return out


# prof_fw_memory's record (platform/agent/agent_fw.c, struct fw_mem_head):
# tid, ns, bytes (negative: a free), address (0: unknown), total allocated,
# reserved, active (-1: unknown), device type (c10's: 0 CPU, 1 CUDA),
# device index (-1: the CPU).
MEM_HEAD = struct.Struct("<iQqQqqqhh")


def pack_memory(tid, ns, nbytes, addr, allocated, reserved, active, dev_type, dev_index):
    """One allocator event for Agent.fw_memory."""
    return MEM_HEAD.pack(tid, ns, nbytes, addr, allocated, reserved, active, dev_type, dev_index)


def _optional(lib, name, argtypes, restype):
    """The agent's function `name`, typed, or None when it has none."""
    fn = getattr(lib, name, None)
    if fn is not None:
        fn.argtypes, fn.restype = argtypes, restype
    return fn


class Agent:
    def __init__(self, lib):
        self._lib = lib
        # the agent then knows the hooks are here (a process that imports
        # torch without them gets a notice at exit: agent_python.c)
        loaded = _optional(lib, "prof_fw_hooks_loaded", [], None)
        if loaded is not None:
            loaded()
        self.step = lib.prof_step
        self.step.argtypes, self.step.restype = [], None
        # prof's own ranges and marks: never dropped by a domain filter
        # (mstx_domain_include/exclude); an older agent has only the public ones
        self.range_push = getattr(lib, "prof_fw_range_push", None) or lib.prof_range_push
        self.range_push.argtypes, self.range_push.restype = [ctypes.c_char_p], None
        self.range_pop = lib.prof_range_pop
        self.range_pop.argtypes, self.range_pop.restype = [], None
        self.mark = getattr(lib, "prof_fw_mark", None) or lib.prof_mark
        self.mark.argtypes, self.mark.restype = [ctypes.c_char_p], None
        self.has_fw = hasattr(lib, "prof_fw_state") and hasattr(lib, "prof_fw_ops")
        if self.has_fw:
            self._state = lib.prof_fw_state
            self._state.argtypes, self._state.restype = [], ctypes.c_uint64
            self._fw_ops = lib.prof_fw_ops
            self._fw_ops.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
            self._fw_ops.restype = ctypes.c_int
        # Optional entries: None when this agent lacks them (an older one,
        # or one built without the CUDA backend).
        # profile_memory's allocator events
        self._fw_memory = _optional(lib, "prof_fw_memory", [ctypes.c_char_p, ctypes.c_size_t],
                                    ctypes.c_int)
        # whether prof holds CUPTI
        self._cupti_held = _optional(lib, "prof_fw_cupti_held", [], ctypes.c_int)
        # whether operators can come as torch's NVTX ranges (PROF_OPS_NVTX)
        self._nvtx_begin = _optional(lib, "prof_fw_nvtx_ops_begin", [], ctypes.c_char_p)
        # ... and how many the agent has taken so far
        self._nvtx_seen = _optional(lib, "prof_fw_nvtx_ops_seen", [], ctypes.c_longlong)
        # this process's stream directory
        self._dir_fd = _optional(lib, "prof_fw_dir_fd", [], ctypes.c_int)
        # torch's own flush files against --storage-limit
        self._charge = _optional(lib, "prof_fw_charge", [ctypes.c_uint64], ctypes.c_int)
        self._log = _optional(lib, "prof_fw_log", [ctypes.c_char_p], None)
        # prof_fw_rank(rank): the rank init_process_group names
        self.set_rank = _optional(lib, "prof_fw_rank", [ctypes.c_int], ctypes.c_int)
        # prof_fw_gc(phase, generation, collected, uncollectable)
        self.gc = _optional(lib, "prof_fw_gc", [ctypes.c_uint32, ctypes.c_uint32,
                                                ctypes.c_uint64, ctypes.c_uint64], None)

    def fw_ops(self, buf):
        """Operators packed by pack_op, in one call; how many were written."""
        return max(self._fw_ops(buf, len(buf)), 0)

    def fw_memory(self, buf):
        """Allocator events packed by pack_memory, in time order; how many
        were written (-1: this agent takes none)."""
        if self._fw_memory is None:
            return -1
        return max(self._fw_memory(buf, len(buf)), 0)

    def holds_cupti(self):
        """Whether prof holds CUPTI, so that torch's profiler records no
        device activity (platform/agent/device/cuda/backend.c)."""
        return self._cupti_held is not None and self._cupti_held() != 0

    def nvtx_ops_begin(self):
        """None when torch's NVTX ranges of operators reach prof in this
        process (the agent then expects them), else why not."""
        if self._nvtx_begin is None:   # prof built without CUPTI: nothing to say each run
            return "setting: this agent has no CUDA backend"
        why = self._nvtx_begin()
        return None if why is None else why.decode("utf-8", "replace")

    def nvtx_ops_seen(self):
        """Operators taken from torch's NVTX ranges so far in this process;
        None when the agent cannot tell now."""
        n = self._nvtx_seen() if self._nvtx_seen is not None else -1
        return None if n < 0 else n

    def fw_dir(self):
        """A path to this process's stream directory (raw/<pid>.<n>/), or
        None: where torch writes its own trace of a flush."""
        fd = self._dir_fd() if self._dir_fd is not None else -1
        return "/proc/self/fd/%d" % fd if fd >= 0 else None

    def charge(self, nbytes):
        """Whether the run's storage budget (--storage-limit) takes nbytes
        more that torch wrote for prof; True without a budget."""
        return self._charge is None or self._charge(nbytes) != 0

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
