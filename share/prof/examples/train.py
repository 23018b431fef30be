"""prof's example training loop: a small MLP on random data, SGD.

    prof run -- python3 train.py                  # 20 steps, a second or two
    prof run --record-shapes -- python3 train.py --steps 50 --workers 2

Nothing in it knows about prof: each optimizer.step() is a step, and prof
records the operators of the steps its schedule selects. Deterministic: the
same seed gives the same loss. The last line says the loss and the median
(and mean) step time.

Options: --steps N, --workers N (take batches from a DataLoader with N
worker processes; 0, the default, makes the batches in the loop),
--mp-context fork|spawn (the workers' start method), --hidden N,
--batch N, --sleep-per-step SEC (a slower loop, e.g. to edit a --dynamic
configuration while it runs), --print-every N (a line every N steps),
--torch-profiler (wrap the loop in torch.profiler.profile(activities=[CPU])
itself, for comparison; with --record-shapes / --with-stack, those options
of it).
"""
import argparse
import statistics
import time

import torch
from torch import nn


def batches(args, generator):
    """The training data: random inputs, labels from a fixed random rule."""
    n = args.steps * args.batch
    x = torch.randn(n, args.inputs, generator=generator)
    y = (x[:, :10].argmax(dim=1) + (x[:, 10] > 0).long()) % 10
    if args.workers == 0:
        return [(x[i:i + args.batch], y[i:i + args.batch]) for i in range(0, n, args.batch)]
    data = torch.utils.data.TensorDataset(x, y)
    return torch.utils.data.DataLoader(data, batch_size=args.batch, num_workers=args.workers,
                                       multiprocessing_context=args.mp_context)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--mp-context", choices=["fork", "spawn"], default="fork")
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--inputs", type=int, default=256)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--sleep-per-step", type=float, default=0.0)
    ap.add_argument("--print-every", type=int, default=0)
    ap.add_argument("--torch-profiler", action="store_true")
    ap.add_argument("--record-shapes", action="store_true",
                    help="with --torch-profiler: its record_shapes=True")
    ap.add_argument("--with-stack", action="store_true",
                    help="with --torch-profiler: its with_stack=True")
    ap.add_argument("--profile-memory", action="store_true",
                    help="with --torch-profiler: its profile_memory=True")
    args = ap.parse_args()

    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(1)
    model = nn.Sequential(nn.Linear(args.inputs, args.hidden), nn.ReLU(),
                          nn.Linear(args.hidden, args.hidden), nn.ReLU(),
                          nn.Linear(args.hidden, 10))
    loss_fn = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    data = batches(args, generator)

    profiler = None
    if args.torch_profiler:
        from torch.profiler import ProfilerActivity, profile
        profiler = profile(activities=[ProfilerActivity.CPU], record_shapes=args.record_shapes,
                           with_stack=args.with_stack, profile_memory=args.profile_memory)
        profiler.start()

    times, loss = [], None
    t_last = time.perf_counter()
    for x, y in data:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if args.sleep_per_step:
            time.sleep(args.sleep_per_step)
        now = time.perf_counter()
        times.append(now - t_last)
        t_last = now
        if args.print_every and len(times) % args.print_every == 0:
            print("step %d loss=%.4f" % (len(times), loss.item()), flush=True)

    extra = ""
    if profiler is not None:
        t0 = time.perf_counter()
        profiler.stop()  # torch processes what it recorded here
        extra = " profiler_stop_ms=%.1f" % (1e3 * (time.perf_counter() - t0))
    print("steps=%d loss=%.4f median_step_ms=%.3f mean_step_ms=%.3f%s" % (
        len(times), loss.item(), 1e3 * statistics.median(times), 1e3 * statistics.mean(times), extra),
        flush=True)


if __name__ == "__main__":
    main()
