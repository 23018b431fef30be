"""prof's hooks for PyTorch programs, installed by sitecustomize right after
`import torch` has finished, in every Python process of a `prof run`.

  steps.py   a step ends at each top-level Optimizer.step() of the leading
             optimizer (rules in steps.py); each is reported with prof_step()
  ops.py     torch's profiler (CPU activity) run in the windows the agent's
             schedule opens; operators go to the agent's framework stream
  data.py    DataLoader ranges: fetches in worker processes, batches taken
  modules.py with_modules: nn.Module forward calls as nested ranges
  dist.py    init_process_group: the rank of a process that its launcher
             did not name (torch.multiprocessing.spawn)
  ends.py    os._exit and a thread's end: the last operators are sent
  aside.py   the program's own profiler: the operators step aside while
             it runs, and the user hears it gets no device activity
  guard.py   every hook body runs guarded: an exception is logged to the
             agent (logs/agent-<pid>.log) and switches that hook off

Explicit steps: a program that calls prof_tx.step() itself says where its
steps end; from its first call on, optimizer steps no longer end steps
(prof_tx.step() reports the step and calls `explicit_step()` here so the
operator collection follows). prof_tx.start()/stop() call
`recording_changed()`, so operators start and stop with them.

Nothing here raises into the program or writes to its stdout/stderr.
"""
import atexit
import importlib
import os
import sys

from . import agent as _agent
from . import aside
from .guard import Guard

_hooks = None

# A notice about this process alone (RUN_NOTICE_NO_STEPS, lib/run/notices.h):
# prof leaves it unsaid when other processes of the run stepped.
NO_STEPS = "notice: no steps were seen"


class Hooks:
    def __init__(self, torch, agent):
        self.torch = torch
        self.agent = agent
        self.explicit = False
        self.collector = None
        self.ops_guard = Guard("operators", agent.log, lost="operators are no longer collected "
                               "in this process (those collected before are kept)")
        self.steps = None
        self.backwards = None    # steps.BackwardCount, in the main process
        self.first_call = None   # steps.FirstCall, in the main process
        self.ranks = None        # dist.RankWatch
        self.exited = False      # _at_exit ran (atexit, or os._exit)
        self.loop_why = None     # what began the loop (_loop_begins)
        self.loop_seen = False   # the training loop began: operators are collected
        self.batch_seen = False  # the loop took its first DataLoader batch
        self.device_said = False
        self.modules = None

    def install(self):
        from . import data
        torch, log = self.torch, self.agent.log
        # A multiprocessing child (spawn, forkserver: DataLoader workers, mp.spawn
        # ranks) collects operators only once it steps.
        main = not multiprocessing_child()
        if self.agent.has_fw:
            from .ops import Collector
            c = self.ops_guard.call(Collector, torch.autograd.profiler, torch.empty, self.agent,
                                    self.ops_guard, main)
            if c is not None:
                self.collector = c
                self.ops_guard.on_fail = c.abandon
                os.register_at_fork(after_in_child=c.after_fork_in_child)
        from .modules import Modules
        self.modules = Modules(torch, self.agent, Guard(
            "modules", log, lost="module ranges are no longer recorded in this process"))
        Guard("aside", log).call(aside.watch, torch, torch.autograd.profiler,
                                 self._user_profiler, self._user_profiler_ended)
        path = self._install_loop_watches(main)
        for name in ("torch.utils.data._utils.fetch", "torch.utils.data.dataloader"):
            _module(name)
        from .dist import RankWatch
        self.ranks = RankWatch(self.agent, Guard(
            "rank", log, lost="the rank init_process_group names is not recorded in this "
            "process"))
        ranked = self.ranks.guard.call(self.ranks.install, torch)
        check = self.collector.check_fork if self.collector else None
        wrapped = data.install(self.agent, Guard(
            "DataLoader", log, lost="DataLoader ranges are no longer recorded in this process"),
            check, self._batch_taken)
        log("installed in %s (torch %s): steps via %s; DataLoader: %s; init_process_group: %s; "
            "operators: %s" % (
                "the main process" if main else "a multiprocessing child",
                getattr(torch, "__version__", "?"), path or "nothing (no known optimizer hook)",
                ", ".join(wrapped) or "nothing", "yes" if ranked else "no",
                "yes" if self.collector else
                "no (the agent has no framework stream)" if not self.agent.has_fw else
                "no (failed)"))
        self._install_ends()

    def _install_loop_watches(self, main):
        """What ends steps (optimizers, GradScaler) and, in the main
        process, what else begins the loop (backward, a module call). The
        optimizer hook's path, or None."""
        from . import steps
        torch, log = self.torch, self.agent.log
        self.steps = steps.Steps(self._step_ended, Guard(
            "step", log, lost="optimizer steps no longer end steps in this process"),
            self._optimizer_built)
        optim = _module("torch.optim.optimizer")
        path = self.steps.install(optim) if optim is not None else None
        # torch.amp's (2.3 on; torch.cuda.amp's subclasses it) or torch.cuda.amp's
        for name in ("torch.amp.grad_scaler", "torch.cuda.amp.grad_scaler"):
            scaler = getattr(_module(name), "GradScaler", None)
            if scaler is not None:
                self.steps.guard.call(self.steps.install_scaler, scaler)
        if main:
            self.backwards = steps.BackwardCount(
                lambda: self._loop_begins("the first backward()"))
            Guard("backward count", log).call(self.backwards.install, torch.autograd)
            if not self.loop_seen:
                self.first_call = steps.FirstCall(self._first_module_call)
                Guard("first module call", log).call(self.first_call.install, torch.nn.Module)
        return path

    def _install_ends(self):
        """The process's end (atexit, os._exit), a fork child's start and a
        thread's end."""
        from . import ends
        log = self.agent.log
        atexit.register(self._at_exit)  # after torch's own: runs before them
        os.register_at_fork(after_in_child=self._after_fork_in_child)
        Guard("os._exit", log).call(ends.wrap_os_exit, self._at_exit)
        Guard("thread end", log).call(ends.wrap_thread_end, self._thread_ends)

    def _after_fork_in_child(self):
        """A fork child is a process of its own: what it tells at its exit
        is what it did, not its parent's steps, backward passes or loop."""
        self.exited = False
        self.loop_why = None
        if self.steps is not None:
            self.steps.count = self.steps.skipped = 0
        if self.backwards is not None:
            self.backwards.n = 0

    def _thread_ends(self):
        """A thread ends: if it collected operators, they are sent."""
        c = self.collector
        if c is not None and c.running and self.ops_guard.on:
            self.ops_guard.call(c.thread_ends)

    def _loop_begins(self, why):
        """The training loop is about to start (an optimizer was built, a
        batch taken, a backward pass run, prof_tx.step/start called, or,
        in a program that does none of these first, a module called):
        operators are collected from here on, on this thread, not from
        `import torch`. A process that only imports torch or launches
        others (torchrun's) never collects, and a DataLoader worker forked
        before this point inherits no profiler session to tear down."""
        if self.loop_seen:
            return
        self.loop_seen = True
        self.loop_why = why
        if self.first_call is not None:
            self.first_call.remove()
        if self.collector is not None and self.ops_guard.on:
            self.agent.log("the training loop begins (%s): operators are collected from here"
                           % why)
            self.ops_guard.call(self.collector.update, False)
        self._follow_modules()

    def _follow_modules(self):
        if self.modules is not None and self.modules.guard.on:
            self.modules.follow(self.agent.state()[0])

    def _first_module_call(self):
        # a DataLoader worker forked before the loop began runs the
        # dataset's transforms, which may be modules: not a loop of its own
        from .steps import in_dataloader_worker
        if not in_dataloader_worker():
            self._loop_begins("the first nn.Module call")

    def _batch_taken(self):
        if not self.loop_seen:
            self._loop_begins("the first DataLoader batch")
        elif not self.batch_seen and self.collector is not None and self.ops_guard.on:
            self.ops_guard.call(self.collector.restart_for_stacks)
        self.batch_seen = True

    def _user_profiler(self, what, device):
        """The program starts a profiler of its own (aside.py)."""
        if self.collector is not None and self.ops_guard.on:
            self.ops_guard.call(self.collector.step_aside, what)
        if device and not self.device_said:
            self.device_said = True
            recorded = os.environ.get("PROF_AGENT_DEVICE") == "1"
            self.agent.log(
                "notice: the program's own profiler (%s) asks for CUDA activity, but prof holds "
                "CUPTI, which serves one profiler: that profiler records no GPU activity here "
                "(torch's warning \"CUPTI initialization failed\" on stderr says the same); "
                "%s" % (what, "prof's trace has it" if recorded else
                        "run without --activities CPU to have it in prof's trace"))

    def _user_profiler_ended(self, what):
        if self.collector is not None and self.ops_guard.on:
            self.ops_guard.call(self.collector.step_back, what)

    def _step_ended(self):
        self.loop_seen = True
        if self.ranks is not None:
            self.ranks.at_step()
        if not self.explicit:
            self.agent.step()
        if self.collector is not None and self.ops_guard.on:
            self.ops_guard.call(self.collector.update)
        self._follow_modules()

    def _optimizer_built(self, cls_name):
        # the parse's hint (parse_model_steps.c): the loop starts after this
        self.agent.mark(("Optimizer.__init__#%s.__init__" % cls_name).encode("utf-8", "replace"))
        self._loop_begins("%s built" % cls_name)

    def explicit_step(self):
        self.loop_seen = True
        if self.ranks is not None:
            self.ranks.at_step()
        if not self.explicit:
            self.explicit = True
            self.agent.log("the program calls prof_tx.step(): optimizer steps no longer end steps")
        if self.collector is not None and self.ops_guard.on:
            self.ops_guard.call(self.collector.update)
        self._follow_modules()

    def recording_changed(self):
        self.loop_seen = True
        if self.collector is not None and self.ops_guard.on:
            self.ops_guard.call(self.collector.update, False)
        self._follow_modules()

    def _at_exit(self):
        if self.exited:
            return
        self.exited = True
        if self.collector is not None and self.ops_guard.on:
            self.ops_guard.call(self.collector.at_exit)
        if self.collector is not None:
            self.collector.report_unreadable()
        from .steps import in_dataloader_worker
        if in_dataloader_worker():
            return   # workers never step: nothing to say of steps
        if self.steps is not None and self.steps.count:
            self.agent.log("%d optimizer steps ended steps in this process%s%s" % (
                self.steps.count, " (then prof_tx.step() took over)" if self.explicit else "",
                "; GradScaler skipped the update of %d of them (inf/NaN gradients)" %
                self.steps.skipped if self.steps.skipped else ""))
        elif self.backwards is not None and self.backwards.n and not self.explicit:
            self.agent.log(
                NO_STEPS + ": backward() ran %d times in this process but "
                "no torch.optim optimizer stepped (weights updated by hand?); mark each "
                "step with prof_tx.step()" % self.backwards.n)
        elif self.loop_why is not None and not self.explicit:
            self.agent.log(
                NO_STEPS + ": this process never stepped a torch.optim "
                "optimizer (inference?), and its loop began at %s; mark each step (a "
                "batch, a request) with prof_tx.step() to have steps" % self.loop_why)


def multiprocessing_child():
    """Started by multiprocessing's spawn or forkserver. sys.orig_argv (3.10+)
    because a spawned child's sys.argv is the parent's by the time its
    __main__ (and torch) is imported."""
    argv = getattr(sys, "orig_argv", None) or sys.argv
    return "--multiprocessing-fork" in argv or \
        any(a.startswith("from multiprocessing.") for a in argv)


def _module(name):
    mod = sys.modules.get(name)
    if mod is None:
        try:
            mod = importlib.import_module(name)
        except Exception:
            return None
    return mod


def install(torch):
    """Called by sitecustomize once torch/__init__.py has run."""
    global _hooks
    if _hooks is not None:
        return
    agent = _agent.load()
    if agent is None:
        return
    hooks = Hooks(torch, agent)
    _hooks = hooks
    try:
        hooks.install()
    except Exception as e:
        Guard("install", agent.log).fail(e)


def explicit_step():
    """prof_tx.step() was called: the program marks its steps itself."""
    if _hooks is not None:
        try:
            _hooks.explicit_step()
        except Exception:
            pass


def recording_changed():
    """prof_tx.start()/stop() was called: operators follow at once, not at the next step."""
    if _hooks is not None:
        try:
            _hooks.recording_changed()
        except Exception:
            pass
