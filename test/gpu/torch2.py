"""Training loops on one CUDA device that exercise what torch 2.x users do,
for prof's GPU checks (scenarios.py). Each mode prints one line
`RESULT {json}` (what the loop did, so the checks can compare prof's
outputs with it) and exits 0.

  loop      a CNN fed by a DataLoader with 2 worker processes (pinned
            memory), NVTX ranges (torch.cuda.nvtx), a cudaMemset and a
            device-to-device copy per step, an explicit synchronize
  compile   a torch.compile'd MLP (Triton kernels)
  graphs    forward and backward captured once in a CUDA graph and
            replayed each step; the optimizer steps eagerly
  userprof  the loop above run under torch.profiler (CPU + CUDA) by the
            script itself: prof must step aside (and collect again for a
            second loop after it) and the script's own trace must hold
            operators
  streams   an MLP whose batches come over a side stream: the copy
            stream records an event, the compute stream waits for it
            (cudaStreamWaitEvent), the host synchronizes on an event at
            the end of each step (cudaEventSynchronize); for event syncs,
            profile_memory, with_modules and with_flops on CUDA
  amp       fp16 autocast with a GradScaler whose initial scale overflows:
            its first updates are skipped (no optimizer.step()), and
            every iteration must still end a step
  ddp       DistributedDataParallel over NCCL as torchrun starts it
            (`python3 -m torch.distributed.run --nproc_per_node 1`: a
            lease has one GPU, and NCCL takes one rank per device): NCCL's
            set-up and threads under prof, DDP's gradient buckets, one
            all_reduce of the loss a step
  inscript  no prof run: CUDA initialised first, then prof.profile
            (CPU + CUDA, a schedule, tensorboard_trace_handler(--out)) in
            the script, as torch_npu users write it (PYTHONPATH must hold
            prof's python package)

  python3 torch2.py MODE [--steps N] [--trace PATH] [--out DIR]
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

import torch
import torch.nn as nn


class Shapes(torch.utils.data.Dataset):
    """Random images and labels, made in the workers."""

    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(3, 32, 32, generator=g), int(i % 10)


def cnn():
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 8 * 8, 128), nn.ReLU(), nn.Linear(128, 10))


def mlp():
    return nn.Sequential(nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 1024), nn.GELU(),
                         nn.Linear(1024, 10))


def cudart():
    """The libcudart torch loaded, for a plain cudaMemset (torch itself
    fills with kernels)."""
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "libcudart" in path:
                return ctypes.CDLL(path)
    return None


def loop(args, profiler=None):
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = cnn().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    data = torch.utils.data.DataLoader(Shapes(), batch_size=128, num_workers=2,
                                       pin_memory=True)
    rt = cudart()
    scratch = torch.empty(1 << 20, dtype=torch.uint8, device=dev)
    mirror = torch.empty_like(scratch)
    memsets = 0
    times = []
    it = iter(data)
    for i in range(args.steps):
        t0 = time.perf_counter()
        torch.cuda.nvtx.range_push("train_step")
        x, y = next(it)
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
        torch.cuda.nvtx.range_push("forward")
        loss = loss_fn(model(x), y)
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("backward")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.cuda.nvtx.range_pop()
        opt.step()
        if rt is not None and rt.cudaMemset(ctypes.c_void_p(scratch.data_ptr()), i & 0xff,
                                            ctypes.c_size_t(scratch.numel())) == 0:
            memsets += 1
        mirror.copy_(scratch)  # device to device
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        times.append((time.perf_counter() - t0) * 1e3)
        if profiler is not None:
            profiler.step()
    return {"median_step_ms": statistics.median(times), "steps": len(times),
            "memsets": memsets, "loss": float(loss.item())}


def mlp_steps(model, opt, steps, after_step=None):
    """`steps` steps of `model` on one fixed batch, each synchronized and
    timed; after_step() after each (a profiler's step())."""
    dev = torch.device("cuda")
    x = torch.randn(256, 512, device=dev)
    y = torch.randint(0, 10, (256,), device=dev)
    torch.cuda.synchronize()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
        if after_step is not None:
            after_step()
    return {"median_step_ms": statistics.median(times), "steps": len(times),
            "loss": float(loss.item())}


def compiled(args):
    torch.manual_seed(0)
    model = torch.compile(mlp().to(torch.device("cuda")))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    return mlp_steps(model, opt, args.steps)


def graphs(args):
    """Whole forward+backward in one graph (torch.cuda.graphs docs' recipe),
    replayed per step; the optimizer outside it, so steps are seen."""
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = mlp().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    sx = torch.randn(256, 512, device=dev)
    sy = torch.randint(0, 10, (256,), device=dev)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up on a side stream, as the docs say
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss_fn(model(sx), sy).backward()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        sloss = loss_fn(model(sx), sy)
        sloss.backward()
    times = []
    for i in range(args.steps):
        t0 = time.perf_counter()
        sx.copy_(torch.randn(256, 512, device=dev))
        g.replay()
        opt.step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return {"median_step_ms": statistics.median(times), "steps": len(times),
            "loss": float(sloss.item()), "graph_nodes": _graph_nodes(g)}


def _graph_nodes(g):
    try:
        return int(g.raw_cuda_graph_exec() != 0)
    except Exception:
        return -1


def userprof(args):
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as p:
        res = loop(args, p)
    p.export_chrome_trace(args.trace)
    with open(args.trace) as f:
        ev = json.load(f).get("traceEvents", [])
    res["torch_kernels"] = sum(1 for e in ev if e.get("cat") == "kernel")
    res["torch_cpu_ops"] = sum(1 for e in ev if e.get("cat") == "cpu_op")
    # after the script's profiler: does prof's own tracing still work?
    res.update({"after_" + k: v for k, v in loop(args).items() if k == "steps"})
    return res


def streams(args):
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = mlp().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    side = torch.cuda.Stream()
    xs = [torch.randn(256, 512).pin_memory() for _ in range(4)]
    y = torch.randint(0, 10, (256,), device=dev)
    arrived, done = torch.cuda.Event(), torch.cuda.Event()
    times = []
    for i in range(args.steps):
        t0 = time.perf_counter()
        with torch.cuda.stream(side):
            x = xs[i % len(xs)].to(dev, non_blocking=True)
            arrived.record(side)
        torch.cuda.current_stream().wait_event(arrived)
        x.record_stream(torch.cuda.current_stream())
        loss = loss_fn(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        done.record()
        done.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return {"median_step_ms": statistics.median(times), "steps": len(times),
            "loss": float(loss.item()), "side_stream": side.stream_id}


def amp(args):
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = mlp().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.cuda.amp.GradScaler(init_scale=2.0 ** 40)   # overflows at first
    x = torch.randn(256, 512, device=dev)
    y = torch.randint(0, 10, (256,), device=dev)
    skipped, times = 0, []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        before = scaler.get_scale()
        scaler.step(opt)
        scaler.update()
        skipped += scaler.get_scale() < before   # the scale drops when the update was skipped
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return {"median_step_ms": statistics.median(times), "steps": len(times),
            "skipped": int(skipped), "loss": float(loss.item())}


def ddp(args):
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group("nccl")
    dev = torch.device("cuda", torch.cuda.current_device())
    torch.manual_seed(0)
    model = DistributedDataParallel(mlp().to(dev), device_ids=[dev.index])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(256, 512, device=dev)
    y = torch.randint(0, 10, (256,), device=dev)
    times = []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        metric = loss.detach().clone()
        dist.all_reduce(metric)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    res = {"median_step_ms": statistics.median(times), "steps": len(times),
           "loss": float(metric.item()), "rank": dist.get_rank(),
           "world": dist.get_world_size(), "nccl": ".".join(map(str, torch.cuda.nccl.version()))}
    dist.destroy_process_group()
    return res


def inscript(args):
    """prof.profile in the script, CUDA already initialised (the agent
    attaches to it), one window of 3 steps written by the handler."""
    import prof
    torch.manual_seed(0)
    model = mlp().to(torch.device("cuda"))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    torch.cuda.synchronize()
    acts = [prof.ProfilerActivity.CPU, prof.ProfilerActivity.CUDA]
    with prof.profile(activities=acts, schedule=prof.schedule(wait=1, warmup=1, active=3, repeat=1),
                      on_trace_ready=prof.tensorboard_trace_handler(args.out)) as p:
        return mlp_steps(model, opt, args.steps, p.step)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("loop", "compile", "graphs", "userprof", "streams",
                                     "amp", "ddp", "inscript"))
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--trace", default="torch_trace.json")
    ap.add_argument("--out", default="prof_result", help="inscript: the handler's directory")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch2.py: no CUDA device", file=sys.stderr)
        return 2
    fn = {"loop": loop, "compile": compiled, "graphs": graphs, "userprof": userprof,
          "streams": streams, "amp": amp, "ddp": ddp, "inscript": inscript}[args.mode]
    res = fn(args)
    res.update({"mode": args.mode, "device": torch.cuda.get_device_name(0),
                "torch": torch.__version__, "cuda": torch.version.cuda})
    print("RESULT " + json.dumps(res), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
