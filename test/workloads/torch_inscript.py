"""A training loop profiled from inside, torch_npu style: prof.profile with a
schedule and an on_trace_ready handler, as torch_npu's documentation writes
it, with a DataLoader and worker processes.

    torch_inscript.py OUT [--steps 10] [--workers 2] [--handler tensorboard|export|none]
                          [--schedule W,U,A,R,S | --schedule torch:W,U,A,R,S | --schedule none]
                          [--with-stack] [--stacks FILE] [--tx-first]

--handler export: a handler of the program's own that calls
export_chrome_trace(OUT/trace_<n>.json) for each window; --stacks FILE:
export_stacks(FILE) after the loop; --tx-first: `import prof_tx` before
`import prof` (bound late in a plain python). Prints "steps N windows M".
"""
import argparse
import os
import sys

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--steps", type=int, default=10)
ap.add_argument("--workers", type=int, default=2)
ap.add_argument("--handler", default="tensorboard")
ap.add_argument("--schedule", default="1,1,2,2,0")
ap.add_argument("--with-stack", action="store_true")
ap.add_argument("--stacks")
ap.add_argument("--tx-first", action="store_true")
ap.add_argument("--export-type", default="text", help="text, db or text,db")
args = ap.parse_args()

if args.tx_first:
    import prof_tx
import torch
from torch import nn

import prof
import prof_tx


def make_schedule(text):
    if text == "none":
        return None
    kind, _, nums = text.rpartition(":")
    w, u, a, r, s = (int(v) for v in nums.split(","))
    if kind == "torch":
        return torch.profiler.schedule(wait=w, warmup=u, active=a, repeat=r, skip_first=s)
    return prof.schedule(wait=w, warmup=u, active=a, repeat=r, skip_first=s)


windows = []


def export_handler(p):
    windows.append(p.step_num)
    p.export_chrome_trace(os.path.join(args.out, "trace_%d.json" % len(windows)))


handler = {"tensorboard": prof.tensorboard_trace_handler(args.out),
           "export": export_handler, "none": None}[args.handler]
torch.manual_seed(0)
data = torch.utils.data.TensorDataset(torch.randn(args.steps * 4, 16), torch.randint(0, 4, (args.steps * 4,)))
loader = torch.utils.data.DataLoader(data, batch_size=4, num_workers=args.workers)
net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
with prof.profile(activities=[prof.ProfilerActivity.CPU], schedule=make_schedule(args.schedule),
                  on_trace_ready=handler, with_stack=args.with_stack,
                  experimental_config=prof.ExperimentalConfig(
                      profiler_level=prof.ProfilerLevel.Level0,
                      export_type=args.export_type.split(","))) as p:
    for x, y in loader:
        with prof_tx.range("train_step"):
            opt.zero_grad()
            nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
        p.step()
if args.stacks:
    p.export_stacks(args.stacks)
print("steps %d windows %d" % (p.step_num, p._windows))
sys.stdout.flush()
