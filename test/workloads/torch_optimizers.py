"""Optimizer patterns that step detection must count right. Usage:
torch_optimizers.py CASE [ITERATIONS]; prints "expected steps N", the number
of steps prof must see.

  two       GAN-style: D.step(); G.step() every iteration -> 1 step each
  custom    an Optimizer subclass of our own, @torch.no_grad() step
  super     an SGD subclass whose step() calls super().step(), after a plain
            SGD was made (so SGD.step is wrapped too)
  lbfgs     LBFGS with a closure, max_iter=3
  steplr    SGD and a StepLR scheduler (which wraps the instance's step)
  nested    a wrapper optimizer whose step() steps an inner optimizer
  takeover  optimizer A for 3 iterations, then B: B's second step ends a step
  scaler    AMP's GradScaler.step(), which skips optimizer.step() in the
            first two iterations (their gradients overflow): torch 1.x's
            own GradScaler.step, run on the CPU with its CUDA-only inf
            check stood in for
"""
import collections
import sys

import torch
from torch import nn

CASE = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 6

torch.manual_seed(0)
x, y = torch.randn(16, 32), torch.randint(0, 10, (16,))


def net():
    return nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 10))


def loss_of(model):
    return nn.functional.cross_entropy(model(x), y)


def backward(model, opt):
    opt.zero_grad()
    loss = loss_of(model)
    loss.backward()
    return loss


class PlainSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.01):
        super().__init__(params, {"lr": lr})

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-group["lr"])


class LoggingSGD(torch.optim.SGD):
    def step(self, closure=None):
        return super().step(closure)


class Wrapper(torch.optim.Optimizer):
    """Steps an inner optimizer (Lookahead-like)."""

    def __init__(self, inner):
        self.inner = inner
        super().__init__(inner.param_groups[0]["params"], {})

    def step(self, closure=None):
        return self.inner.step(closure)


model = net()
expected = N
if CASE == "two":
    gen, disc = net(), net()
    g_opt = torch.optim.Adam(gen.parameters(), lr=1e-3)
    d_opt = torch.optim.SGD(disc.parameters(), lr=1e-2)
    for _ in range(N):
        backward(disc, d_opt)
        d_opt.step()
        backward(gen, g_opt)
        g_opt.step()
elif CASE == "custom":
    opt = PlainSGD(model.parameters())
    for _ in range(N):
        backward(model, opt)
        opt.step()
elif CASE == "super":
    torch.optim.SGD(net().parameters(), lr=0.1)  # wraps SGD.step first
    opt = LoggingSGD(model.parameters(), lr=0.01)
    for _ in range(N):
        backward(model, opt)
        opt.step()
elif CASE == "lbfgs":
    opt = torch.optim.LBFGS(model.parameters(), max_iter=3)

    def closure():
        return backward(model, opt)

    for _ in range(N):
        opt.step(closure)
elif CASE == "steplr":
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(N):
        backward(model, opt)
        opt.step()
        sched.step()
elif CASE == "nested":
    opt = Wrapper(torch.optim.SGD(model.parameters(), lr=0.01))
    for _ in range(N):
        backward(model, opt)
        opt.step()
elif CASE == "takeover":
    a = torch.optim.SGD(model.parameters(), lr=0.01)
    b = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(3):
        backward(model, a)
        a.step()
    for _ in range(N):
        backward(model, b)
        b.step()
    expected = 3 + N - 1  # B's first step falls inside the step its second ends
elif CASE == "scaler":
    from torch.cuda.amp import grad_scaler as gs
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = gs.GradScaler(enabled=False)   # built without CUDA, then run as enabled
    scaler._enabled = True
    scaler._scale, scaler._growth_tracker = torch.tensor(65536.0), torch.tensor(0)
    scaler._per_optimizer_states = collections.defaultdict(gs._refresh_per_optimizer_state)
    for i in range(N):
        backward(model, opt)
        # what unscale_ finds on a GPU: infs in the first two iterations
        state = scaler._per_optimizer_states[id(opt)]
        state["found_inf_per_device"] = {torch.device("cpu"): torch.tensor(float(i < 2))}
        state["stage"] = gs.OptState.UNSCALED
        scaler.step(opt)
        scaler._per_optimizer_states = collections.defaultdict(gs._refresh_per_optimizer_state)
else:
    sys.exit("unknown case " + CASE)
print("expected steps", expected)
