"""Data-parallel training on CPU with the gloo backend, as torchrun starts
it (RANK, WORLD_SIZE, MASTER_ADDR from the launcher): a small MLP wrapped
in DistributedDataParallel, one all_reduce of a metric per step besides
DDP's gradient buckets.

    python3 -m torch.distributed.run --nproc_per_node 2 torch_ddp_gloo.py [STEPS]
Rank 0 prints "ddp: N steps on W ranks, loss L".

    python3 torch_ddp_gloo.py STEPS spawn WORLD PORT [unwrapped]
starts the ranks itself with torch.multiprocessing.spawn, as PyTorch's DDP
tutorial does: no RANK in any environment, each rank's number given only to
init_process_group ("unwrapped": torch's own function, under any wrapper
of it, as code that imported it before a profiler's hooks would call it).

    python3 torch_ddp_gloo.py STEPS fork WORLD PORT
the same with a multiprocessing.Process per rank, forked: each rank ends
with os._exit, as multiprocessing's forked children do (no atexit). Each rank marks its set-up with prof_tx before that
call when prof_tx is importable, so its process has recorded before it
knows its rank, and takes its batches from a DataLoader worker (spawned,
as the ranks were)."""
import os
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset


def main(steps):
    dist.init_process_group("gloo")
    gen = torch.Generator().manual_seed(dist.get_rank())
    train(steps, ((torch.randn(32, 64, generator=gen), torch.randint(0, 10, (32,), generator=gen))
                  for _ in range(steps)))


def spawned(rank, world, port, steps, unwrapped):
    try:
        import prof_tx
        prof_tx.mark("set-up before init_process_group")
    except ImportError:
        pass
    os.environ["OMP_NUM_THREADS"] = "1"
    init = dist.init_process_group
    while unwrapped and hasattr(init, "__wrapped__"):
        init = init.__wrapped__
    init("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=world)
    # one worker, which torch.multiprocessing.spawn's ranks start by spawning
    gen = torch.Generator().manual_seed(rank)
    data = TensorDataset(torch.randn(32 * steps, 64, generator=gen),
                         torch.randint(0, 10, (32 * steps,), generator=gen))
    train(steps, DataLoader(data, batch_size=32, num_workers=1))


def train(steps, batches):
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = DistributedDataParallel(nn.Sequential(nn.Linear(64, 256), nn.ReLU(),
                                                  nn.Linear(256, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    for x, y in batches:
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
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    if len(sys.argv) > 2 and sys.argv[2] == "spawn":
        import torch.multiprocessing as mp
        mp.spawn(spawned, args=(int(sys.argv[3]), int(sys.argv[4]), n, "unwrapped" in sys.argv),
                 nprocs=int(sys.argv[3]))
    elif len(sys.argv) > 2 and sys.argv[2] == "fork":
        import multiprocessing
        world, port = int(sys.argv[3]), int(sys.argv[4])
        ctx = multiprocessing.get_context("fork")
        ranks = [ctx.Process(target=spawned, args=(r, world, port, n, False))
                 for r in range(world)]
        for p in ranks:
            p.start()
        for p in ranks:
            p.join()
        sys.exit(max(p.exitcode for p in ranks))
    else:
        main(n)
