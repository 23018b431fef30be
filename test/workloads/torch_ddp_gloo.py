"""Data-parallel training on CPU with the gloo backend, as torchrun starts
it (RANK, WORLD_SIZE, MASTER_ADDR from the launcher): a small MLP wrapped
in DistributedDataParallel, one all_reduce of a metric per step besides
DDP's gradient buckets.

    python3 -m torch.distributed.run --nproc_per_node 2 torch_ddp_gloo.py [STEPS]
Rank 0 prints "ddp: N steps on W ranks, loss L"."""
import os
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DistributedDataParallel(nn.Sequential(nn.Linear(64, 256), nn.ReLU(),
                                                  nn.Linear(256, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(rank)
    for _ in range(steps):
        x = torch.randn(32, 64, generator=gen)
        y = torch.randint(0, 10, (32,), generator=gen)
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        metric = loss.detach().clone()
        dist.all_reduce(metric)
    if rank == 0:
        print("ddp: %d steps on %d ranks, loss %.4f" % (steps, world, metric.item() / world))
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
