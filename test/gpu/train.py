"""A small PyTorch training loop on one CUDA device, for prof's GPU checks
(run_overhead.py). Random data, a fixed model, N timed steps after a
warm-up; each step copies a pinned batch to the device (HtoD copies),
runs forward/backward/optimizer (kernels, a memset from zero_grad), and
brackets its phases with NVTX ranges (train_step > forward/backward/
optimizer) so prof's NVTX capture has something to find.

Prints one line `RESULT {json}` with the median step time in ms.

  python3 train.py [--steps 60] [--warmup 10] [--model mlp|cnn]
                   [--torch-profiler TRACE.json [--torch-cpu-only]]   # under torch.profiler
"""
import argparse
import contextlib
import json
import statistics
import sys
import time

import torch
import torch.nn as nn


def make_model(kind):
    if kind == "cnn":
        return nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * 16 * 16, 256), nn.ReLU(), nn.Linear(256, 10))
    return nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
                         nn.Linear(4096, 10))


def make_batch(kind, batch):
    shape = (batch, 3, 64, 64) if kind == "cnn" else (batch, 1024)
    x = torch.randn(*shape).pin_memory()
    y = torch.randint(0, 10, (batch,)).pin_memory()
    return x, y


@contextlib.contextmanager
def nvtx(name):
    torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        torch.cuda.nvtx.range_pop()


def step(model, opt, loss_fn, x_host, y_host, dev):
    with nvtx("train_step"):
        x = x_host.to(dev, non_blocking=True)
        y = y_host.to(dev, non_blocking=True)
        with nvtx("forward"):
            loss = loss_fn(model(x), y)
        with nvtx("backward"):
            opt.zero_grad(set_to_none=False)
            loss.backward()
        with nvtx("optimizer"):
            opt.step()
    return loss


def train(args, profiler=None):
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = make_model(args.model).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x_host, y_host = make_batch(args.model, args.batch)
    times = []
    args.loop_start = time.monotonic()
    for i in range(args.warmup + args.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = step(model, opt, loss_fn, x_host, y_host, dev)
        torch.cuda.synchronize()
        if i >= args.warmup:
            times.append((time.perf_counter() - t0) * 1e3)
        if profiler is not None:
            profiler.step()
    return times, float(loss.item())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--model", choices=("mlp", "cnn"), default="mlp")
    ap.add_argument("--torch-profiler", metavar="TRACE", default=None,
                    help="profile with torch.profiler (CPU and CUDA) and export TRACE")
    ap.add_argument("--torch-cpu-only", action="store_true",
                    help="with --torch-profiler: CPU activity only (what its CUDA tracing "
                    "costs is the difference)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("train.py: no CUDA device", file=sys.stderr)
        return 2
    if args.torch_profiler:
        acts = [torch.profiler.ProfilerActivity.CPU]
        if not args.torch_cpu_only:
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        with torch.profiler.profile(activities=acts) as prof:
            times, loss = train(args, prof)
        prof.export_chrome_trace(args.torch_profiler)   # outside the timed steps
    else:
        times, loss = train(args)
    print("RESULT " + json.dumps({
        "median_step_ms": statistics.median(times), "min_step_ms": min(times),
        "mean_step_ms": statistics.mean(times),
        # CLOCK_MONOTONIC at the first step: whoever ran this script times
        # from there to its exit (the steps, then any profiler's own end)
        "loop_start_mono": args.loop_start,
        "steps": len(times), "model": args.model, "loss": loss,
        "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
        "cuda": torch.version.cuda}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
