"""Framework operators: torch's profiler (CPU activity only), driven by
prof's steps and schedule, converted into the agent's framework stream.

The agent decides which steps record (schedule, --dynamic, prof_start/stop)
and says so through prof_fw_state(); `update()` asks after every step (and
once when torch has been imported) and:

  * starts the profiler at the first step that warms up or records, with
    record_shapes / with_stack / profile_memory / with_modules from the
    state's bits (only the arguments this torch takes);
  * when the window's last recorded step ends (or a new window begins right
    after it, or the detail bits change) stops it and sends its operators;
  * inside a long window stops, sends and restarts every FLUSH_EVERY
    recorded steps, so a crash loses at most that many steps of operators.
    Not fewer flushes for small steps: on an H200 host a flush of 35 steps
    (5040 operators) cost more per step than one of 10 (1478), torch's stop
    and the conversion both growing faster than the operators (2026-11-27,
    test/gpu/README);
  * stops and sends at exit (atexit).

Operators that started before the window's first recorded step (warm-up)
are dropped. Clock: torch timestamps (epoch-based in 1.13) are mapped onto
CLOCK_MONOTONIC through marks recorded right after each start: a few
torch.empty(0) calls, each timed with time.monotonic_ns(), inside a
"prof::clock_sync" range; the offset comes from the most tightly timed one
(within ~1 us; record_function's own enter/exit would be ~10 us off). The
marks are not sent. Threads: the marks' torch thread id is this thread's
OS id; other torch thread ids are sent negated (the agent's convention for
"unknown").

Backward: an operator is flagged backward when it is an autograd node
(scope BACKWARD_FUNCTION, or named "autograd::engine::evaluate_function:
...") or runs nested inside one on its thread (its parent chain, rebuilt
from time nesting), which covers the aten ops a backward node calls.

The stop uses the profiler's raw results (torch.autograd._disable_profiler),
not FunctionEvents: torch's own FunctionEvent parsing costs more than the
rest of the collection together.

Torch writes the flush (PROF_OPS_KINETO_SAVE=1, torch 2.x, no details
asked but shapes and modules; experimental): _save has torch's C++
export write the stopped session as Kineto's trace JSON into this
process's raw directory, with a note of the clock marks and keep_from
beside it; prof's launcher converts
it while the program runs (platform/launcher/fw_ingest.c, with
lib/ingest/parse_kineto.c, which the parse uses for what is left); the
getters are not called here at all.

Operators as torch's NVTX ranges (the default where it applies: torch
2.x built with CUDA, in a process whose CUDA and NVTX prof traces, no
details asked; PROF_OPS_NVTX=0 never, =1 says at the end of the run why
not where it does not apply): _start_nvtx runs torch's NVTX observer
instead of its profiler; the agent, NVTX's tool, takes its ranges at the
call and writes them as operators; nothing is flushed on the program's
thread (test/gpu/README has the figures that made it the default).

Memory (profile_memory): the allocator's events torch recorded in the
window go to the agent's fwmem.raw (agent.pack_memory), in time order on
the same clock as the operators. Their address and the allocator's totals
come from the profiler's event tree (experimental_event_tree(): torch 1.13
and 2.x give ptr, alloc_size, total_allocated, total_reserved); a torch
without it gives the "[memory]" events' size, device and thread only
(address 0, totals -1: the parse keeps running totals). The operator of an
event is found by the parse (the innermost operator open on its thread).

Stepping aside: when the program starts a profiler of its own (aside.py
sees it), ours stops first and sends what it has; once the program's
profiler has been switched off, ours starts again right away (on the
thread that switched it off, as the agent's state says). The first time
goes to the agent log as a notice. Steps are still recorded.

Collection starts where the training loop does (the hooks' _loop_begins:
an optimizer built, the first batch, the first backward(), a step), never
at `import torch`. A fork child drops the profiler session it inherited
(its events are the parent's) at its first hook call.
"""
import json
import operator
import os
import sys
import threading
import time

from . import agent as A
from .agent import OP_HEAD, pack_memory, pack_op
from . import aside

SYNC_NAME = "prof::clock_sync"
SYNC_OP = "aten::empty"
SYNC_CALLS = 8
FLUSH_EVERY = 10
SAVED_DETAIL = A.SHAPES | A.MODULES   # what a flush torch writes itself can carry
SAVE_LIMIT = 1 << 30   # torch's flush files waiting to be converted (~500 bytes an operator)
FLUSH_RANGE = b"prof::operators flush"   # the parse shows "prof::" ranges as prof's
SCOPE_BACKWARD = 1    # at::RecordScope::BACKWARD_FUNCTION
SCOPE_USER = 7        # at::RecordScope::USER_SCOPE (record_function)
MEMORY_EVENT = "[memory]"
TORCH_NEXT = "enumerate(DataLoader)#"   # torch's record_function around __next__
BACKWARD_PREFIX = "autograd::engine::evaluate_function"
_START_THEN_LONGEST = operator.itemgetter(0, 1)   # on (start, -end, event, name)


# A reason for not taking the NVTX way that the run's settings or its
# torch give (the agent's prof_fw_nvtx_ops_begin marks its own so): the
# usual way then goes without a word unless PROF_OPS_NVTX=1 asked.
SETTING = "setting: "


def _nvtx_torch_lacks(torch):
    """Why this torch's NVTX ranges cannot be prof's operators (None: they can)."""
    version = getattr(torch, "__version__", "0")
    if not version[:1].isdigit() or int(version.split(".")[0]) < 2:
        return (SETTING + "torch %s's NVTX ranges name no operator ids (torch 2.0 or later "
                "does)" % version)
    if getattr(getattr(torch, "version", None), "cuda", None) is None:
        return SETTING + "torch %s was built without CUDA" % version
    return None


class Collector:
    def __init__(self, profiler, empty, agent, guard, main_process):
        """profiler: torch.autograd.profiler (profile, record_function and
        the _disable_profiler it imported from torch.autograd); empty:
        torch.empty, the clock marks' operator."""
        self.agent = agent
        self.guard = guard
        self.main = main_process
        self._profiler = profiler
        self._disable = profiler._disable_profiler
        self._empty = empty
        self._kwargs_ok = self._profile_params()
        self.aside = False       # the program's own profiler runs: ours waits
        self.asides = 0          # times the program started one
        self.running = False
        self.started_once = False  # Kineto initialises at the first start
        self.owner = None        # thread that started the profiler (its state is per thread)
        self.native = 0          # that thread's OS id
        self.detail = 0          # PROF_FW_* detail bits of the running session
        self.recording = False   # the step in progress is recorded
        self.windows = 0
        self.keep_from = None    # ns: operators starting earlier are dropped
        self.rec_steps = 0       # recorded steps begun since the last flush
        self.sync = None
        self.forked = False
        self.sent = 0
        self.skipped = 0         # operators torch could not hand over
        self.no_stack = 0        # ... whose call stack was not valid UTF-8
        self._names = {}
        self._types = {}
        self._tids = {}          # torch thread id -> OS tid (negated torch id: unknown)
        self._other_thread_logged = False
        self.save_kineto = os.environ.get("PROF_OPS_KINETO_SAVE") == "1"
        nvtx = os.environ.get("PROF_OPS_NVTX")   # see _start_nvtx
        self.nvtx_asked = nvtx == "1"   # where it does not apply, the user hears why
        # the default where it applies, unless turned off or torch's own
        # flush files asked for
        self.nvtx = self.nvtx_asked or (nvtx != "0" and not self.save_kineto)
        self.nvtx_ctx = None     # the running session is torch's NVTX observer's
        self._nvtx_waits = 0     # starts made the usual way while CUDA was not traced yet
        self._nvtx_detail_said = False
        self._nvtx_base = None   # the agent's NVTX operators at the first NVTX start
        self._nvtx_checked = False
        self.saves = 0
        self.saved_bytes = 0

    def _profile_params(self):
        import inspect
        try:
            return set(inspect.signature(self._profiler.profile.__init__).parameters)
        except (TypeError, ValueError):
            return {"use_cpu", "record_shapes", "with_stack", "profile_memory", "with_modules"}

    # --- stepping aside (aside.py watches for it) ------------------------
    def step_aside(self, what):
        if self.aside:
            return
        self.aside = True
        self.asides += 1
        msg = ("notice: the program runs a profiler of its own (%s): prof steps aside while it "
               "runs (torch has one profiler per process), so the operators of those steps are "
               "in the program's trace, not prof's; steps are still recorded" % what)
        if self.running and threading.get_ident() == self.owner:
            self._stop(send=True)
        elif self.running:
            msg += " (ours stops at this thread's next step)"
        if self.asides == 1:
            self.agent.log(msg)

    def step_back(self, what):
        """The program's profiler was switched off (`what`): ours starts
        again now, not at the next step, which would lose that step."""
        if not self.aside:
            return
        self.aside = False
        if self.asides == 1:
            self.agent.log("the program's profiler ended (%s): prof collects operators again"
                           % what)
        if not self.running:
            self.update(step_ended=False)

    # --- the window -----------------------------------------------------
    def check_fork(self):
        if self.forked:
            self._forget_inherited()

    def _forget_inherited(self):
        """In a fork child: the running session holds the parent's events."""
        self.forked = False
        self._tids = {}
        if not self.running:
            return
        self.running = False
        self.keep_from = None
        self.recording = False
        self.nvtx_ctx = None   # no emit_nvtx exit here: it would synchronize CUDA in a fork child
        if threading.get_ident() == self.owner:
            self._switch_off()
        self.agent.log("dropped the operator collection inherited through fork")

    def after_fork_in_child(self):
        self.forked = True  # nothing else here: the child may hold no lock we need ...
        if self.nvtx_ctx is not None and threading.get_ident() == self.owner:
            # ... but torch's NVTX observer goes now, before the child runs an
            # operator: its ranges would reach the parent's CUPTI, copied
            # into a child without CUDA (a DataLoader worker). Its state and
            # callback are this thread's own: no lock is taken.
            self.abandon()

    def restart_for_stacks(self):
        """The loop's first batch, in a session begun earlier (when the
        optimizer was built) with call stacks: start afresh here. torch's
        Python tracer gives the frames already running when a session
        starts the line they were at then, so the loop's own frame would
        show the optimizer's line in every stack; from here on it shows
        the loop's."""
        if self.running and threading.get_ident() == self.owner and self.detail & A.STACK:
            self.update(step_ended=False, force_flush=True)

    def update(self, step_ended=True, force_flush=False):
        """After each step (and at torch import, and when the program calls
        prof_tx.start/stop: step_ended False): follow the agent's state."""
        if self.forked:
            self._forget_inherited()
        if self.running and threading.get_ident() != self.owner:
            if not self._other_thread_logged:
                self._other_thread_logged = True
                self.agent.log("a step ended on another thread than the one collecting "
                               "operators; that thread's steps do not drive the collection")
            return
        if self.nvtx_ctx is not None and not self._nvtx_checked and step_ended and \
                self.recording:
            self._nvtx_check()
        flags, windows = self.agent.state()
        rec = bool(flags & A.RECORDING)
        want = not self.aside and bool(flags & A.OPS) and bool(flags & (A.RECORDING | A.WARMUP))
        flush = False
        if self.running:
            ended = self.recording and (not rec or windows != self.windows)
            flush = force_flush or not want or ended or (flags & A.DETAIL) != self.detail or \
                (rec and step_ended and self.rec_steps >= FLUSH_EVERY and not self.nvtx_ctx)
        if flush:
            # prof's own work on the program's thread, shown as such in the
            # trace (category "prof"), so that it is never taken for the model
            self.agent.range_push(FLUSH_RANGE)
            try:
                self._stop(send=True)
                if want:
                    self._start(flags & A.DETAIL)
            finally:
                self.agent.range_pop()
        if want and not self.running:
            self._start(flags & A.DETAIL)
        if self.running and rec:
            if self.keep_from is None:
                self.keep_from = time.monotonic_ns()
            if step_ended or self.rec_steps == 0:
                self.rec_steps += 1
        self.recording = self.running and rec
        self.windows = windows

    def at_exit(self):
        if self.forked:
            self._forget_inherited()
        else:
            self.thread_ends()

    def thread_ends(self):
        """The thread ends (or the process): torch's session can only be
        stopped on the thread that started it, so a training loop run in a
        thread of its own sends its last operators here."""
        if self.running and threading.get_ident() == self.owner:
            self._stop(send=True)

    def _start(self, detail):
        if self.nvtx and detail and not self._nvtx_detail_said:
            self._nvtx_detail_said = True
            self._nvtx_not_here(SETTING + "torch's NVTX ranges carry no call stacks, shapes, "
                                "memory, modules or FLOPs, which this run asks for")
        if self.nvtx and not detail and self._start_nvtx():
            return
        kw = {"use_cpu": True, "record_shapes": bool(detail & A.SHAPES),
              "with_stack": bool(detail & A.STACK), "profile_memory": bool(detail & A.MEMORY),
              "with_modules": bool(detail & A.MODULES), "with_flops": bool(detail & A.FLOPS),
              "use_kineto": True}
        p = self._profiler.profile(**{k: v for k, v in kw.items() if k in self._kwargs_ok})
        aside.ours.on = True
        quiet = _KinetoQuiet() if not self.started_once else None
        try:
            p.__enter__()
        finally:
            aside.ours.on = False
            if quiet is not None:
                quiet.restore()
        self.started_once = True
        self.running = True
        self.owner = threading.get_ident()
        self.native = threading.get_native_id()
        self.detail = detail
        self.keep_from = None
        self.rec_steps = 0
        self.sync = self._clock_marks()

    # --- operators as torch's NVTX ranges (PROF_OPS_NVTX) ------------------
    def _start_nvtx(self):
        """Torch 2.x with CUDA, a process whose CUDA and NVTX prof traces,
        no details asked (PROF_OPS_NVTX=0: never): torch's NVTX observer
        (emit_nvtx) wraps each operator in an NVTX range ("aten::mm, seq =
        3, op_id = 9"), which the agent takes at the NVTX call and writes
        as an operator in its thread's stream
        (platform/agent/device/cuda/backend_nvtx.c). Nothing is stopped,
        converted or restarted on the program's thread: no flushes. Not a
        CUDA process yet: the usual way, and again at the next start."""
        why = _nvtx_torch_lacks(sys.modules.get("torch")) or self.agent.nvtx_ops_begin()
        if why is not None:
            if why.startswith("CUDA is not traced in this process yet"):
                self._nvtx_waits += 1
                if self._nvtx_waits == 1:
                    self.agent.log("operators: not through NVTX yet: %s" % why)
            else:
                self.nvtx = False
                self._nvtx_not_here(why)
            return False
        ctx = self._enter_nvtx()
        if ctx is None:
            return False
        if not self.started_once:
            self.agent.log("operators: through torch's NVTX ranges: no flushes on the "
                           "program's thread")
        self.started_once = True
        self.running = True
        self.owner = threading.get_ident()
        self.native = threading.get_native_id()
        self.detail = 0
        self.keep_from = None
        self.rec_steps = 0
        self.sync = None
        self.nvtx_ctx = ctx
        if self._nvtx_base is None:
            self._nvtx_base = self.agent.nvtx_ops_seen()
        return True

    def _nvtx_check(self):
        """The first recorded step through NVTX has ended: its operators
        reached the agent, or torch's ranges do not reach prof here (a
        torch whose ranges it does not know, an NVTX that began before prof
        was its tool). Then torch's profiler from now on, said: only that
        step's operators are lost."""
        self._nvtx_checked = True
        seen = self.agent.nvtx_ops_seen()
        if seen is None or self._nvtx_base is None or seen > self._nvtx_base:
            return
        self._nvtx_failed("none of the first recorded step's reached prof through torch's "
                          "NVTX ranges",
                          "through torch's profiler from the next step on (that step's are lost)",
                          "; tell us the torch version")
        self._stop(send=False)

    def _enter_nvtx(self):
        """torch's NVTX observer on, or None: it failed where it should
        not (the agent traces NVTX here), which the user hears."""
        ctx = self._profiler.emit_nvtx(record_shapes=False)
        aside.ours.on = True
        try:
            ctx.__enter__()
            return ctx
        except Exception as ex:
            self._nvtx_failed("torch's NVTX observer did not start (%s)" % ex,
                              "the usual way (torch's profiler)")
            return None
        finally:
            aside.ours.on = False

    def _nvtx_failed(self, what, how, more=""):
        """The NVTX way failed where it should have worked: torch's profiler
        from now on, and the user hears it."""
        self.nvtx = False
        self.agent.log("notice: operators: %s; prof collects them %s; PROF_OPS_NVTX=0 goes "
                       "that way at once%s" % (what, how, more))

    def _nvtx_not_here(self, why):
        """The NVTX way does not apply: the usual way. The user hears why at
        the end of the run when PROF_OPS_NVTX=1 asked for it, or when it is
        not the run's settings or torch that rule it out (another NVTX
        tool, a CUPTI without NVTX): the usual way costs more a step."""
        chosen = why.startswith(SETTING)
        why = why[len(SETTING):] if chosen else why
        if self.nvtx_asked:
            self.agent.log("notice: PROF_OPS_NVTX: %s; prof collects operators the usual way"
                           % why)
        elif not chosen:
            self.agent.log("notice: operators: torch's NVTX ranges cannot reach prof here (%s), "
                           "so prof collects them through torch's profiler, which costs more a "
                           "step (README: Cost)" % why)
        else:
            self.agent.log("operators: the usual way (torch's profiler), not through its NVTX "
                           "ranges: %s" % why)

    def _stop_nvtx(self):
        ctx, self.nvtx_ctx = self.nvtx_ctx, None
        aside.ours.on = True
        try:
            ctx.__exit__(None, None, None)
        except Exception as ex:
            self.agent.log("torch's NVTX observer did not stop cleanly: %s" % ex)
        finally:
            aside.ours.on = False

    def abandon(self):
        """After a failure of ours: switch the profiler off, keep nothing,
        so that it neither grows nor blocks a profiler of the program's."""
        if self.running and threading.get_ident() == self.owner:
            self.running = False
            self.nvtx_ctx = None
            self._switch_off()

    def _switch_off(self):
        """torch's profiler (or NVTX observer) off on this thread, what it
        holds dropped, a failure ignored: nothing of it is wanted."""
        aside.ours.on = True
        try:
            self._disable()
        except Exception:
            pass
        finally:
            aside.ours.on = False

    def _clock_marks(self):
        """SYNC_CALLS tiny operators, each timed with time.monotonic_ns(),
        inside a "prof::clock_sync" range that finds them again. An aten
        call from Python is stamped within about a microsecond of the calls
        around it; record_function's own enter/exit are Python-heavy and
        lopsided (~10 us), so the range only marks where to look."""
        empty, mono = self._empty, time.monotonic_ns
        pairs = []
        with self._profiler.record_function(SYNC_NAME):
            for _ in range(SYNC_CALLS):
                t0 = mono()
                empty(0)
                pairs.append((t0, mono()))
        return pairs

    def _stop(self, send):
        self.running = False
        if self.nvtx_ctx is not None:   # its operators are the agent's already
            self._stop_nvtx()
            self.keep_from = None
            self.recording = False
            return
        t0 = time.monotonic_ns()
        aside.ours.on = True
        try:
            result = self._disable()
        finally:
            aside.ours.on = False
        stop_ns = time.monotonic_ns() - t0
        if send and self.keep_from is not None and not self._save(result, stop_ns):
            self._send(result, self.keep_from, self.detail, self.native, self.sync, stop_ns)
        self.keep_from = None
        self.recording = False

    # --- torch writes the flush itself (PROF_OPS_KINETO_SAVE) ---------------
    def _save(self, result, stop_ns):
        """PROF_OPS_KINETO_SAVE=1 on torch 2.x, no details asked but shapes
        (torch's JSON has them) and modules (prof's own ranges): torch's own
        C++ export (_ProfilerResult.save, Kineto's trace JSON) writes the
        flush into this process's stream directory with a note of ours
        beside it, and prof's launcher converts it while the program runs
        (launcher/fw_ingest.h; the parse, what is left); the
        program's thread pays that export instead of a getter call an
        event. Off by default until a GPU has shown it cheaper
        (test/gpu/README). False: convert here as always."""
        if not self.save_kineto or self.detail & ~SAVED_DETAIL or not hasattr(result, "save"):
            return False
        where = self.agent.fw_dir()
        if where is None:
            return False
        self.saves += 1
        base = os.path.join(where, "kineto-%d" % self.saves)
        t0 = time.monotonic_ns()
        try:
            result.save(base + ".json")
            size = os.path.getsize(base + ".json")
            if not self.agent.charge(size):
                _unlink(base + ".json")
                self.save_kineto = False
                self.agent.log("notice: the storage limit (--storage-limit) is reached: the "
                               "operators of this flush are not kept")
                return True
            # the note last: with it the JSON is whole (the parse and the
            # launcher take a flush only then)
            note = "pid %d\ntid %d\nkeep_from %d\n%s" % (
                os.getpid(), self.native, self.keep_from,
                "".join("mark %d %d\n" % p for p in self.sync))
            with open(base + ".meta.tmp", "w") as f:
                f.write(note)
            os.rename(base + ".meta.tmp", base + ".meta")
        except Exception as ex:   # this flush and the next ones: converted here
            _unlink(base + ".json")
            _unlink(base + ".meta.tmp")
            self.save_kineto = False
            self.agent.log("notice: torch could not write its trace of an operator flush (%s); "
                           "prof converts the operators itself from now on" % ex)
            return False
        self.saved_bytes += size
        self.agent.log("operators: written by torch in %.1f ms (kineto-%d.json, %d KiB; prof "
                       "converts them), after torch's stop took %.1f ms" % (
                           (time.monotonic_ns() - t0) / 1e6, self.saves, size >> 10, stop_ns / 1e6))
        if self.saved_bytes > SAVE_LIMIT:   # those prof's launcher has not converted yet
            self.saved_bytes = _waiting_bytes(where)
        if self.saved_bytes > SAVE_LIMIT:
            self.save_kineto = False
            self.agent.log("notice: torch's trace files of operator flushes waiting to be converted "
                           "reached %d MiB; prof converts the next flushes itself"
                           % (self.saved_bytes >> 20))
        return True

    # --- conversion -----------------------------------------------------
    @staticmethod
    def _offset(sync, sync_times, marks, pairs):
        """ns to add to the profiler's times to get CLOCK_MONOTONIC: from the
        clock mark timed most tightly (the last SYNC_CALLS SYNC_OP events in
        the marker range, on its thread: 1.13's record_function makes one of
        its own when it enters); the midpoints of the range and of the
        calls around it when the marks are not all there. marks: (start,
        end, event) of the SYNC_OP events inside the range, any thread."""
        ss, se = sync_times
        tid = sync.start_thread_id()
        marks = sorted((m[:2] for m in marks if m[2].start_thread_id() == tid),
                       key=lambda m: m[0])[-SYNC_CALLS:]
        if len(marks) != len(pairs):
            return (pairs[0][0] + pairs[-1][1]) // 2 - (ss + se) // 2
        i = min(range(len(pairs)), key=lambda k: pairs[k][1] - pairs[k][0])
        (t0, t1), (m0, m1) = pairs[i], marks[i]
        return (t0 + t1) // 2 - (m0 + m1) // 2

    def _os_tid(self, tid, resource):
        """A torch thread id's OS tid: torch 2.x records it with each CPU
        operator (device_resource_id; 0 in 1.13). Unknown: the negated torch
        id, the agent's convention. The autograd engine's device threads
        launch the backward's kernels, so their operators must sit on
        their OS thread for the parse to join them to those launches."""
        if resource > 0 and resource < (1 << 31):
            self.agent.log("torch thread %d is OS thread %d" % (tid, resource))
            return resource
        return -tid

    def _send(self, result, keep_from, detail, native, pairs, stop_ns):
        """Converts one stopped session's results into the agent's stream;
        `detail`, `native` and `pairs` are that session's. This runs on the
        program's thread, between two of its steps: every call made per
        event counts (each of torch's getters is a pybind call)."""
        t_begin = time.monotonic_ns()
        events = result.events()
        if not events:
            return
        e0 = events[0]
        ns_api = hasattr(e0, "start_ns")
        sync = next((e for e in events if e.name() == SYNC_NAME), None)
        if sync is None:
            self.agent.log("operators dropped: the clock marks are missing from the profiler's results")
            return
        on_device = None if self.agent.holds_cupti() else _device_event_test(e0)
        recs, marks, mem_events, skipped = self._gather(events, sync, ns_api, on_device)
        offset = self._offset(sync, _times(sync, ns_api), marks, pairs)
        tids = self._tids
        tids[sync.start_thread_id()] = native
        no_stack = self.no_stack
        packed, failed_reads = self._pack_all(recs, offset, keep_from, tids,
                                              hasattr(e0, "device_resource_id"), detail,
                                              hasattr(e0, "flops"))
        skipped += failed_reads
        sent = self.agent.fw_ops(b"".join(packed)) if packed else 0
        failed = len(packed) - sent
        self.sent += sent
        self.skipped += skipped
        no_stack = self.no_stack - no_stack
        msg = "operators: %d sent in %.1f ms, after torch's stop took %.1f ms" % (
            sent, (time.monotonic_ns() - t_begin) / 1e6, stop_ns / 1e6)
        if failed:
            msg += ", %d refused by the agent" % failed
        if skipped:
            msg += ", %d unreadable (left out)" % skipped
        if no_stack:
            msg += ", %d with a call stack that is not UTF-8 (kept without it)" % no_stack
        mem_events = [(s + offset, e) for s, e in mem_events if s + offset >= keep_from]
        if mem_events and detail & A.MEMORY:
            msg += self._send_memory(result, mem_events, offset, keep_from, tids, not ns_api)
        elif mem_events:
            msg += ", %d memory events not kept (profile_memory is off)" % len(mem_events)
        self.agent.log(msg)

    def _send_memory(self, result, mem_events, offset, keep_from, tids, in_us):
        """profile_memory: the window's allocator events to the agent, in
        time order; the log line's part about them."""
        t0 = time.monotonic_ns()
        recs, how = None, "event tree"
        tree = getattr(result, "experimental_event_tree", None)
        if tree is not None:
            try:
                recs = _tree_memory(tree(), offset, keep_from, tids, in_us)
            except Exception as ex:   # fall back on the events' own fields
                recs, how = None, "events (the event tree failed: %s)" % ex
        if recs is None:
            if how == "event tree":
                how = "events (no event tree: no addresses, no totals)"
            recs = []
            for s, e in mem_events:
                try:
                    tid = e.start_thread_id()
                    recs.append((s, tids.get(tid, -tid), e.nbytes(), 0, -1, -1, -1,
                                 _dev_type(e.device_type()), _dev_index(e.device_index())))
                except Exception:
                    continue
        recs.sort(key=lambda r: r[0])
        buf = b"".join(pack_memory(tid, s, n, a, ta, tr, tv, dt, di)
                       for s, tid, n, a, ta, tr, tv, dt, di in recs)
        sent = self.agent.fw_memory(buf) if recs else 0
        if sent < 0:
            return ", %d memory events not kept (this agent takes none)" % len(recs)
        return ", %d memory events sent from the %s in %.1f ms" % (
            sent, how, (time.monotonic_ns() - t0) / 1e6)

    @staticmethod
    def _gather(events, sync, ns_api, on_device):
        """One pass over torch's events, in its times: the operators to send
        as (start, -end, event, name) in start order (longest first at a
        tie: parents before children); the clock marks' candidates (SYNC_OP
        inside the sync range, as _offset takes them); the "[memory]" events
        apart, as (start, event); the count of unreadable ones. Nothing is
        dropped by time here: the offset is not known yet."""
        ss, se = _times(sync, ns_api)
        recs, marks, mem_events = [], [], []
        skipped = 0
        append = recs.append
        for e in events:
            if e is sync:
                continue
            try:   # one event torch cannot hand over must not cost the others
                if ns_api:
                    s = e.start_ns()
                    t = s + e.duration_ns()
                else:
                    s = e.start_us()
                    t = (s + e.duration_us()) * 1000
                    s *= 1000
                if on_device is not None and on_device(e):
                    continue
                name = e.name()
            except Exception:
                skipped += 1
                continue
            if name == SYNC_OP and ss <= s <= se:
                marks.append((s, t, e))
            elif name == MEMORY_EVENT:
                mem_events.append((s, e))
                continue
            elif name.startswith(TORCH_NEXT):
                continue   # the batch's span is prof's own (data.py): one, not two
            append((s, -t, e, name))
        recs.sort(key=_START_THEN_LONGEST)
        return recs, marks, mem_events, skipped

    def _pack_all(self, recs, offset, keep_from, tids, resource, detail, has_flops):
        """recs (torch's times) packed for the agent on CLOCK_MONOTONIC,
        those before keep_from left out (agent.pack_op's layout, built in
        this loop without a call per operator when no shapes, stack or FLOPs
        are asked for). Backward: an autograd node, or inside one on its
        thread (parent chains rebuilt from time nesting); only a backward
        operator has a forward thread to ask for. A call stack that is not
        valid UTF-8 (torch decodes it and raises: torchvision's operators at
        import make such) is left out and counted; the operator is kept.
        Returns (packed records, operators torch could not hand over)."""
        names, types_cache, head = self._names, self._types, OP_HEAD.pack
        shapes_on, stack_on = bool(detail & A.SHAPES), bool(detail & A.STACK)
        flops_on = bool(detail & A.FLOPS) and has_flops
        plain = not (shapes_on or stack_on or flops_on)
        stacks = {}  # torch thread id -> [(end, backward)]
        packed = []
        append = packed.append
        skipped = 0
        for s, neg_end, e, name in recs:
            s += offset
            if s < keep_from:
                continue
            try:
                end = offset - neg_end
                tid = e.start_thread_id()
                os_tid = tids.get(tid)
                if os_tid is None:
                    os_tid = tids[tid] = self._os_tid(tid, e.device_resource_id() if resource
                                                      else 0)
                st = stacks.get(tid)
                if st is None:
                    st = stacks[tid] = []
                scope = e.scope()
                while st and end > st[-1][0]:
                    st.pop()
                bwd = scope == SCOPE_BACKWARD or bool(st and st[-1][1]) or \
                    name.startswith(BACKWARD_PREFIX)
                st.append((end, bwd))
                fwd = 0
                if bwd:
                    fwd = e.fwd_thread_id()
                    if fwd:
                        fwd = tids.get(fwd, -fwd)
                flags = (A.OP_BACKWARD if bwd else 0) | (A.OP_USER if scope == SCOPE_USER else 0)
                bname = names.get(name)
                if bname is None:
                    bname = names[name] = name.encode("utf-8", "replace") + b"\0"
                if plain:
                    append(head(os_tid, s, end, flags, e.sequence_nr(), fwd, len(bname),
                                0, 0, 0, 0) + bname)
                    continue
                shapes, types, stack = self._details(e, shapes_on, stack_on, types_cache)
                flops = e.flops() if flops_on else 0
                append(pack_op(os_tid, s, end, bname, shapes, types, stack, flags,
                               e.sequence_nr(), fwd, flops if flops and flops > 0 else 0))
            except Exception:
                skipped += 1
        return packed, skipped

    def _details(self, e, shapes_on, stack_on, types_cache):
        """(shapes, types, stack) of one operator, NUL-ended bytes or None."""
        shapes = types = stack = None
        if shapes_on:
            sh = e.shapes()
            if sh:
                shapes = str(sh).encode() + b"\0"  # lists of ints: Python's repr is JSON
                dt = tuple(e.dtypes())
                types = types_cache.get(dt)
                if types is None:
                    types = types_cache[dt] = json.dumps(list(dt)).encode() + b"\0"
        if stack_on:
            try:
                frames = e.stack()
            except UnicodeDecodeError:
                frames = None
                self.no_stack += 1
            if frames:
                stack = ";".join(frames).encode("utf-8", "replace") + b"\0"
        return shapes, types, stack

    def report_unreadable(self):
        """At exit: what torch could not hand over, said once per process."""
        if self.skipped:
            self.agent.log("notice: %d operators could not be read from torch's profiler and "
                           "were left out (the others are kept)" % self.skipped)
        if self.no_stack:
            self.agent.log("notice: %d operators had a Python call stack that is not valid "
                           "UTF-8 (torchvision's imports make such): kept without their stack"
                           % self.no_stack)

def _waiting_bytes(where):
    """Bytes of torch's flush files still in the directory."""
    total = 0
    for name in os.listdir(where):
        if name.startswith("kineto-") and name.endswith(".json"):
            try:
                total += os.path.getsize(os.path.join(where, name))
            except OSError:
                pass   # converted and removed meanwhile
    return total


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _times(e, ns_api):
    """(start, end) of one of torch's events in its ns (1.13 gives us)."""
    if ns_api:
        s = e.start_ns()
        return s, s + e.duration_ns()
    s = e.start_us()
    return s * 1000, (s + e.duration_us()) * 1000


def _dev_type(t):
    """c10::DeviceType as an int (0 CPU, 1 CUDA), from the enum torch gives."""
    try:
        return int(t)
    except (TypeError, ValueError):
        return {"CPU": 0, "CUDA": 1}.get(getattr(t, "name", ""), 0)


def _dev_index(i):
    """The device index: torch 1.13 gives the CPU's -1 as an unsigned 255."""
    i = int(i)
    return i - 256 if i > 127 else i


def _tree_memory(roots, offset, keep_from, tids, in_us):
    """The allocation events of the profiler's event tree (those of every
    thread, at any depth) as (ns, tid, bytes, addr, allocated, reserved,
    active, device type, device index); None when this torch's tree has
    no allocation events to tell them by. An event inside an operator is
    kept inside that operator's span as the operators are sent: torch 1.13
    sends operators in whole microseconds (in_us) while the tree has ns, so
    an allocation at the end of an aten::empty would fall just past it and
    the parse would not find its operator."""
    kind = getattr(getattr(sys.modules.get("torch"), "_C", None), "_profiler", None)
    alloc_tag = getattr(getattr(kind, "_EventType", None), "Allocation", None)
    if alloc_tag is None:
        return None
    out, todo = [], [(e, None) for e in reversed(roots)]
    while todo:
        e, span = todo.pop()
        if e.tag != alloc_tag:
            s0, s1 = e.start_time_ns, e.end_time_ns
            if in_us:
                s0, s1 = s0 // 1000 * 1000, (s0 // 1000 + (s1 - s0) // 1000) * 1000
            span = (s0 + offset, s1 + offset)
            todo.extend((c, span) for c in reversed(e.children))
            continue
        s = e.start_time_ns + offset
        if span is not None:
            s = max(span[0], min(s, max(span[0], span[1] - 1)))
        if s < keep_from:
            continue
        f = e.extra_fields
        dev = f.device
        dtype = 1 if dev.type == "cuda" else 0
        index = dev.index if dev.index is not None else -1
        tid = e.start_tid
        out.append((s, tids.get(tid, -tid), f.alloc_size, f.ptr & 0xFFFFFFFFFFFFFFFF,
                    f.total_allocated, f.total_reserved, -1, dtype, index))
    return out


class _KinetoQuiet:
    """Kineto sets its log level from KINETO_LOG_LEVEL when it initialises,
    at the process's first profiler start, which is prof's. prof holds
    CUPTI (platform/agent/device/cuda/backend.c), so Kineto's CUPTI set-up fails
    there and it warns on the program's stderr about a conflict the
    program did not make: errors only for that moment, unless the program
    chose a level itself; the variable is then put back. Errors are level 4
    from torch 2.0 on, whose Kineto put STAGE (its "Completed Stage: Warm
    Up" lines, printed at each start and stop) at 3; 1.13's are 3."""

    def __init__(self):
        self.set = "KINETO_LOG_LEVEL" not in os.environ
        if self.set:
            os.environ["KINETO_LOG_LEVEL"] = _kineto_errors_level()

    def restore(self):
        if self.set:
            os.environ.pop("KINETO_LOG_LEVEL", None)


def _kineto_errors_level():
    version = getattr(sys.modules.get("torch"), "__version__", "2")
    try:
        major = int(str(version).split(".")[0])
    except ValueError:
        major = 2
    return "3" if major < 2 else "4"


def _device_event_test(e0):
    """Events of a device (kernels, copies) are not operators: torch 2.x
    returns them when Kineto traces CUDA (another tool holds CUPTI, not
    prof). None when this torch cannot say (1.13 returns none), or when
    CUDA never started in this process (the test costs ~1 us an event)."""
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    if not hasattr(e0, "device_type") or cuda is None or not cuda.is_initialized():
        return None
    cpu = getattr(type(e0.device_type()), "CPU", None)
    if cpu is None:
        return None
    return lambda e: e.device_type() != cpu

