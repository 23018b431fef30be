#!/usr/bin/env python3
"""Where one operator flush's time goes, on the torch at hand: prof's hooks
(ops.Collector, with a stand-in agent that keeps the bytes) run train.py's
MLP for --steps steps, then each part of a flush is timed on its own, best
of --repeat: torch's stop (_disable_profiler), prof's conversion (_send:
events(), the getters, packing), the restart (profile().__enter__ and the
clock marks; then again part by part: the profile object, torch's
prepare and enable, the marks), and what the alternatives would cost:
the device-event test alone (one device_type() a event, torch 2.x with
CUDA), and Kineto's own C++ export of the same results
(_ProfilerResult.save(), torch 2.x). Then the loop's own time with torch's
profiler recording and with torch's NVTX observer on (PROF_OPS_NVTX's way),
against the bare loop.
Figures in ms and in us an operator; nothing is judged.

    python3 test/gpu/flush_cost.py [--steps 10] [--repeat 3] [--cpu]

--cpu runs the MLP on the CPU (a machine without a GPU; torch 1.13 has
no save()). The hooks come from share/prof/python. On a GPU run it under
`prof run --activities DEVICE` (device_check.sh does): prof then holds
CUPTI as in a real run, and its own hooks leave torch's profiler alone.
"""
import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "share", "prof", "python"))
sys.path.insert(0, HERE)

import torch  # noqa: E402
from _prof_hooks import ops  # noqa: E402
from _prof_hooks.agent import unpack_ops  # noqa: E402
import train as T  # noqa: E402  (its model, batch and step)


class KeepAgent:
    """The agent's side of a flush: takes the packed operators, counts them."""
    def __init__(self):
        self.ops = 0
        self.lines = []

    def log(self, msg):
        self.lines.append(msg)

    def fw_ops(self, buf):
        self.ops = len(unpack_ops(buf))
        return self.ops

    def state(self):
        return 0, 0

    def holds_cupti(self):
        return False

    def range_push(self, name):
        pass

    def range_pop(self):
        pass


class Always:
    on = True

    def call(self, fn, *args):
        return fn(*args)


def ms(t0):
    return (time.perf_counter() - t0) * 1e3


def one(args, loop, c):
    """One session of args.steps steps; the parts of its flush, in ms."""
    t0 = time.perf_counter()
    c._start(0)
    start = ms(t0)
    c.keep_from = 0
    loop(args.steps)
    c.running = False
    t0 = time.perf_counter()
    result = c._disable()
    stop = ms(t0)
    events = result.events()
    t0 = time.perf_counter()
    c._send(result, 0, 0, 1, c.sync, 0)
    send = ms(t0)
    dev = None
    test = ops._device_event_test(events[0]) if events else None
    if test is not None:
        t0 = time.perf_counter()
        sum(1 for e in events if test(e))
        dev = ms(t0)
    save = None
    if hasattr(result, "save"):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            result.save(os.path.join(d, "trace.json"))
            save = ms(t0)
    parts = {"stop": stop, "send": send, "start": start, "device test": dev, "save()": save}
    parts.update(start_parts(c))
    return len(events), parts


def start_parts(c):
    """The restart, part by part, as Collector._start makes it: the profile
    object, torch's prepare and enable (profile.__enter__'s two halves),
    the clock marks; then stopped again. Empty when this torch's profile
    has no such halves."""
    kw = {k: v for k, v in {"use_cpu": True, "use_kineto": True}.items() if k in c._kwargs_ok}
    t0 = time.perf_counter()
    p = c._profiler.profile(**kw)
    made = ms(t0)
    if not (hasattr(p, "_prepare_trace") and hasattr(p, "_start_trace")):
        return {}
    t0 = time.perf_counter()
    p._prepare_trace()
    prepare = ms(t0)
    t0 = time.perf_counter()
    p._start_trace()
    enable = ms(t0)
    t0 = time.perf_counter()
    c._clock_marks()
    marks = ms(t0)
    c._disable()
    return {"  profile()": made, "  prepare": prepare, "  enable": enable, "  clock marks": marks}


def in_loop(loop, steps, repeat, c):
    """The loop's own time (ms, best of `repeat`) with nothing on, with
    torch's profiler recording (prof's usual way, the flush left out), and
    with torch's NVTX observer on (PROF_OPS_NVTX's way: under prof with
    device activity, CUPTI records each range)."""
    def bare():
        loop(steps)

    def profiler():
        c._start(0)
        t0 = time.perf_counter()
        loop(steps)
        took = ms(t0)
        c.running = False
        c._disable()
        return took

    def nvtx():
        with torch.autograd.profiler.emit_nvtx():
            t0 = time.perf_counter()
            loop(steps)
            return ms(t0)

    def timed_bare():
        t0 = time.perf_counter()
        bare()
        return ms(t0)
    best = {}
    for _ in range(repeat):
        for name, fn in (("bare", timed_bare), ("torch's profiler", profiler),
                         ("NVTX observer", nvtx)):
            try:
                v = fn()
            except Exception as ex:   # a torch without CUDA has no NVTX observer
                best[name] = repr(ex)[:120]
                continue
            if not isinstance(best.get(name, 0.0), str):
                best[name] = min(best.get(name, v), v)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--model", default="mlp")
    args = ap.parse_args()
    dev = torch.device("cpu" if args.cpu or not torch.cuda.is_available() else "cuda")
    model = T.make_model(args.model).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    x, y = T.make_batch(args.model, args.batch) if dev.type == "cuda" else (
        torch.randn(args.batch, 1024), torch.randint(0, 10, (args.batch,)))

    def loop(n):
        for _ in range(n):
            if dev.type == "cuda":
                T.step(model, opt, loss_fn, x, y, dev)
                torch.cuda.synchronize()
            else:   # train.py's step without its NVTX ranges (a CPU torch has none)
                opt.zero_grad(set_to_none=False)
                loss_fn(model(x), y).backward()
                opt.step()

    loop(5)
    agent = KeepAgent()
    c = ops.Collector(torch.autograd.profiler, torch.empty, agent, Always(), True)
    c.nvtx = False   # the flush way is what is timed here (PROF_OPS_NVTX=0)
    best, n = {}, 0
    for _ in range(args.repeat):
        n, parts = one(args, loop, c)
        for k, v in parts.items():
            if v is not None:
                best[k] = min(best.get(k, v), v)
    print("torch %s on %s, %s, %d steps: %d events, %d operators sent" % (
        torch.__version__, torch.cuda.get_device_name(0) if dev.type == "cuda" else "CPU",
        args.model, args.steps, n, agent.ops))
    for k in ("stop", "send", "start", "  profile()", "  prepare", "  enable", "  clock marks",
              "device test", "save()"):
        if k in best:
            print("  %-14s %8.2f ms %7.2f us an event" % (k, best[k], 1e3 * best[k] / max(n, 1)))
        else:
            print("  %-14s   (not on this torch)" % k)
    print("  agent log: %s" % (agent.lines[-1] if agent.lines else "-"))
    costs = in_loop(loop, args.steps, args.repeat, c)
    print("in the loop, %d steps (best of %d), against bare, per event of a session:" % (
        args.steps, args.repeat))
    for k, v in costs.items():
        if isinstance(v, str):
            print("  %-17s (failed: %s)" % (k, v))
        elif isinstance(costs["bare"], float):
            print("  %-17s %8.2f ms %+7.2f us an event" % (
                k, v, 1e3 * (v - costs["bare"]) / max(n, 1)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
