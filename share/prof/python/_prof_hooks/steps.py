"""Training steps from Optimizer.step(), without editing the program.

A step ends when a top-level Optimizer.step() returns. "Top-level" is per
thread: a step() called while another step() of any optimizer is running on
the same thread (a subclass calling super().step(), a wrapper optimizer
stepping its inner one, LBFGS re-entering through its closure) is part of
the outer one and counts once.

Two optimizers (GAN-style D.step(); G.step(), or any number of them): the
first optimizer object that steps leads, and a step ends when the leading
optimizer's step() returns; steps of the other optimizers fall inside
steps. When the leader steps again after each other optimizer stepped
once (a fixed cycle, each optimizer stepping once in it), the cycle's
last optimizer leads from then on, so
that a step spans one whole cycle and the last update of the run falls
inside the last step (step 1 still ends at the first leader's step, and
step 2 holds one and a half cycles: nothing online knows the cycle
sooner). When another optimizer steps twice while the leader does not step,
it becomes the leader (its second step ends a step), so a program that
switches optimizers between phases keeps counting. A leader that was
garbage-collected hands over to the next optimizer that steps.

Where the hook goes, chosen by what the installed torch offers:

  * `Optimizer._hook_for_profile` (1.x, 2.0) or `Optimizer._patch_step_function`
    (2.1 on): torch calls it from Optimizer.__init__ to wrap the class's
    step() in its record_function("Optimizer.step#X.step"); we wrap that
    method so each optimizer class's step() gets a second wrapper OUTSIDE
    torch's, with a thread-local depth counter. The step therefore ends
    after torch's "Optimizer.step#..." range has closed (no range straddles
    a step boundary), and a step() that raises cannot leave the depth wrong.
  * otherwise, `register_optimizer_step_pre_hook`/`..._post_hook` (the
    global hooks of 2.x): the depth counter follows pre/post hook pairs; a
    step() that raised never gets its post hook, so the counter keeps the
    frames of the calls in flight and forgets those no longer on the stack.

Path 1 also sees each optimizer being built: on_created(class name) is
called then (the hooks mark "Optimizer.__init__#<Class>.__init__", which
tells the parse where a training loop's first step can begin, rather than
where recording began, before the imports).

AMP: GradScaler.step() calls optimizer.step() only when the gradients
are finite; when it skips the update, the iteration still ends a step
(install_scaler).

DataLoader worker processes never count steps.
"""
import functools
import sys
import threading
import weakref


def in_dataloader_worker():
    w = sys.modules.get("torch.utils.data._utils.worker")
    return w is not None and getattr(w, "_worker_info", None) is not None


def _ref(opt):
    try:
        return weakref.ref(opt)
    except TypeError:
        return lambda o=opt: o


class LeaderRule:
    """Decides which optimizer's step() ends a step (the rule above)."""

    def __init__(self):
        self._leader = None  # weakref (or a plain reference for objects without weakrefs)
        self._others = {}    # id(optimizer) -> steps since the leader last stepped
        self._last = None    # the other optimizer that stepped last since then
        self._run = 0        # the leader's steps in a row before the others
        self._cycled = False  # the leader was handed to its cycle's last optimizer

    def _lead(self, opt):
        self._leader = _ref(opt)
        self._others.clear()
        self._last = None

    def ends_step(self, opt):
        leader = self._leader() if self._leader is not None else None
        if leader is None or leader is opt:
            if leader is None:
                self._lead(opt)
                self._run = 1
                return True
            return self._leader_steps()
        n = self._others.get(id(opt), 0) + 1
        if n >= 2:
            self._lead(opt)
            self._run = 1
            return True
        self._others[id(opt)] = n
        self._last = _ref(opt)
        return False

    def _leader_steps(self):
        """Several optimizers stepping in a fixed order (D.step(); G.step()):
        once a whole cycle has been seen, its last optimizer leads, so that
        a step ends where the cycle does and the last update of an
        iteration falls inside its step. Once only: later cycles keep it."""
        last = self._last() if self._last is not None else None
        if last is None:
            self._run += 1
        elif not self._cycled and self._run == 1 and \
                all(n == 1 for n in self._others.values()):
            self._cycled = True
            self._lead(last)
            return False   # this iteration's cycle ends at that optimizer's step
        else:
            self._run = 1
        self._others.clear()
        self._last = None
        return True


class Steps:
    def __init__(self, on_step, guard, on_created=None):
        self._on_step = on_step  # called with no argument when a step ends
        self._on_created = on_created  # called with the class name of a new optimizer
        self.guard = guard
        self.rule = LeaderRule()
        self.count = 0
        self.skipped = 0   # steps whose update a GradScaler skipped
        self.path = None
        self._tls = threading.local()
        self._lock = threading.Lock()

    def install(self, optim_module):
        """Hooks torch.optim.optimizer; returns the path taken, None if none fits."""
        opt_cls = getattr(optim_module, "Optimizer", None)
        for name in ("_hook_for_profile", "_patch_step_function"):
            if opt_cls is not None and callable(getattr(opt_cls, name, None)):
                self._wrap_patcher(opt_cls, name)
                self.path = "Optimizer." + name
                return self.path
        pre = getattr(optim_module, "register_optimizer_step_pre_hook", None)
        post = getattr(optim_module, "register_optimizer_step_post_hook", None)
        if pre is not None and post is not None:
            pre(self._pre_hook)
            post(self._post_hook)
            self.path = "register_optimizer_step_post_hook"
        return self.path

    def install_scaler(self, scaler_cls):
        """AMP's GradScaler.step() skips optimizer.step() when the
        gradients overflowed (the first iterations, while the scale settles,
        then now and then): the iteration ends a step all the same, as if
        the optimizer had stepped. On the class that defines step();
        whether it was wrapped."""
        fn = scaler_cls.__dict__.get("step")
        if fn is None or getattr(fn, "_prof_wrapped", False):
            return False
        steps = self
        tls = self._tls

        @functools.wraps(fn)
        def step(scaler, optimizer, *args, **kwargs):
            depth = getattr(tls, "scaler_depth", 0)
            tops = getattr(tls, "tops", 0)
            tls.scaler_depth = depth + 1
            try:
                out = fn(scaler, optimizer, *args, **kwargs)
            finally:
                tls.scaler_depth = depth
            if depth == 0 and getattr(tls, "depth", 0) == 0 and \
                    getattr(tls, "tops", 0) == tops and steps.guard.on:
                steps.guard.call(steps._skipped, optimizer)
            return out

        step._prof_wrapped = True
        scaler_cls.step = step
        return True

    def _skipped(self, opt):
        self.skipped += 1
        self._top_level(opt)

    # A step ended at the top level of this thread.
    def _top_level(self, opt):
        self._tls.tops = getattr(self._tls, "tops", 0) + 1
        if in_dataloader_worker():
            return
        with self._lock:
            ends = self.rule.ends_step(opt)
            if ends:
                self.count += 1
        if ends:
            self._on_step()

    # Path 1: an outer wrapper per optimizer class.
    def _wrap_patcher(self, opt_cls, name):
        orig = getattr(opt_cls, name)
        steps = self

        @functools.wraps(orig)
        def patcher(opt, *args, **kwargs):
            result = orig(opt, *args, **kwargs)  # torch wraps cls.step (once per class)
            steps.guard.call(steps._wrap_class, type(opt))
            if steps._on_created is not None and steps.guard.on and not in_dataloader_worker():
                steps.guard.call(steps._on_created, type(opt).__name__)
            return result

        setattr(opt_cls, name, patcher)

    def _wrap_class(self, cls):
        fn = cls.step
        if getattr(fn, "_prof_wrapped", False):
            return
        cls.step = self._wrap_step(fn)

    def _wrap_step(self, fn):
        steps = self
        tls = self._tls

        @functools.wraps(fn)  # copies torch's `hooked` flag too, so torch leaves it alone
        def step(*args, **kwargs):
            depth = getattr(tls, "depth", 0)
            tls.depth = depth + 1
            try:
                out = fn(*args, **kwargs)
            finally:
                tls.depth = depth
            if depth == 0 and args and steps.guard.on:
                steps.guard.call(steps._top_level, args[0])
            return out

        step._prof_wrapped = True
        return step

    # Path 2: torch's global pre/post hooks, called from inside its wrapper.
    def _pre_hook(self, opt, args, kwargs):
        if not self.guard.on:
            return None
        try:
            self._pre(sys._getframe(1))  # torch's wrapper running this step()
        except Exception as e:
            self.guard.fail(e)
        return None

    def _pre(self, caller):
        try:
            frames = self._tls.frames
        except AttributeError:
            frames = self._tls.frames = []
        if frames:  # forget calls that raised: they are no longer on the stack
            live = set()
            f = caller.f_back
            while f is not None:
                live.add(id(f))
                f = f.f_back
            frames[:] = [f for f in frames if id(f) in live]
        frames.append(caller)

    def _post_hook(self, opt, args, kwargs):
        if not self.guard.on:
            return None
        try:
            self._post(sys._getframe(1), opt)
        except Exception as e:
            self.guard.fail(e)
        return None

    def _post(self, caller, opt):
        frames = getattr(self._tls, "frames", None)
        if not frames:
            return
        while frames and frames[-1] is not caller:
            frames.pop()
        if frames:
            frames.pop()
        if not frames:
            self._top_level(opt)


class BackwardCount:
    """Counts backward passes (torch.autograd.backward, which
    Tensor.backward calls): a process that runs them and never steps a
    torch.optim optimizer updates its weights by hand, and prof sees no
    steps unless the program marks them; the hooks say so at exit."""

    def __init__(self, on_first=None):
        self.n = 0
        self.on_first = on_first   # called at the first backward pass

    def install(self, autograd):
        orig = getattr(autograd, "backward", None)
        if orig is None or getattr(orig, "_prof_count", False):
            return False
        count = self

        @functools.wraps(orig)
        def backward(*args, **kwargs):
            count.n += 1
            if count.n == 1 and count.on_first is not None:
                count.on_first()
            return orig(*args, **kwargs)

        backward._prof_count = True
        autograd.backward = backward
        return True



class FirstCall:
    """The first nn.Module call of the main process: where a program that
    builds no optimizer, takes no DataLoader batch and runs no backward
    (inference, serving) begins its loop. nn.Module.__call__ is wrapped
    until then and given back at that call, or as soon as the loop begins
    some other way: no module call pays for it after. Not torch's global
    forward pre-hook: a hook cannot remove itself while torch iterates
    over the hooks, and its mere presence takes every module call off
    torch's fast path."""

    def __init__(self, on_first):
        self.on_first = on_first
        self.seen = False
        self._cls = self._orig = None

    def install(self, module_cls):
        orig = module_cls.__dict__.get("__call__")
        if orig is None or getattr(orig, "_prof_first_call", False):
            return False
        watch = self

        @functools.wraps(orig)
        def __call__(module, *args, **kwargs):
            if watch.remove():
                watch.seen = True
                watch.on_first()
            return orig(module, *args, **kwargs)

        __call__._prof_first_call = True
        self._cls, self._orig = module_cls, orig
        module_cls.__call__ = __call__
        return True

    def remove(self):
        """Gives torch's __call__ back; whether it was still wrapped."""
        cls, orig = self._cls, self._orig
        if cls is None:
            return False
        self._cls = self._orig = None
        if getattr(cls.__dict__.get("__call__"), "_prof_first_call", False):
            cls.__call__ = orig
        return True
