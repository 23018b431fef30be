"""with_modules: the nn.Module hierarchy as ranges, "nn.Module: Linear_1"
(Kineto's name: the class and the instance's number among its class),
nested as the modules' forward() calls nest, on the thread that runs them.

Through torch's global forward hooks (torch.nn.modules.module's
register_module_forward_pre_hook / register_module_forward_hook, in torch
1.13 and 2.x), installed once the agent first asks for modules, and idle
(one attribute test per forward) while it does not. Backward passes are
not shown: torch's global full-backward hooks wrap every module's inputs
and outputs in autograd functions, which changes what in-place operations
a program may do; prof does not change a program's behaviour to observe it.

A forward() that raises leaves its range open: the next hook on the thread
closes the ranges of modules no longer running, so the nesting stays right.
"""
import threading
import weakref

from . import agent as _agent

PREFIX = "nn.Module: "


class Modules:
    def __init__(self, torch, agent, guard):
        self.torch = torch
        self.agent = agent
        self.guard = guard
        self.on = False
        self.installed = False
        self.names = weakref.WeakKeyDictionary()   # module -> its range name, bytes
        self.counts = {}                            # class name -> instances named
        self.local = threading.local()

    def follow(self, flags):
        """After each step and switch: ranges while the step records modules."""
        want = bool(flags & _agent.MODULES) and bool(flags & _agent.RECORDING)
        if want and not self.installed:
            self.guard.call(self._install)
        if not want and self.on:
            self._close_all()
        self.on = want and self.installed

    def _install(self):
        m = self.torch.nn.modules.module
        m.register_module_forward_pre_hook(self._pre)
        m.register_module_forward_hook(self._post)
        self.installed = True
        self.agent.log("modules: forward ranges through torch's global module hooks")

    def _name(self, module):
        name = self.names.get(module)
        if name is None:
            cls = type(module).__name__
            n = self.counts.get(cls, 0)
            self.counts[cls] = n + 1
            name = ("%s%s_%d" % (PREFIX, cls, n)).encode("utf-8", "replace")
            self.names[module] = name
        return name

    def _stack(self):
        s = getattr(self.local, "stack", None)
        if s is None:
            s = self.local.stack = []
        return s

    def _pre(self, module, inputs):
        if self.on:
            self.guard.call(self._push, module)

    def _post(self, module, inputs, output):
        if self.on or getattr(self.local, "stack", None):
            self.guard.call(self._pop, module)

    def _push(self, module):
        self.agent.range_push(self._name(module))
        self._stack().append(module)

    def _pop(self, module):
        s = self._stack()
        if not any(m is module for m in s):
            return   # opened before recording began: nothing to close
        while s:
            self.agent.range_pop()
            if s.pop() is module:
                break

    def _close_all(self):
        s = getattr(self.local, "stack", None)
        while s:
            s.pop()
            self.agent.range_pop()
