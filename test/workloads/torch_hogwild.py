"""Hogwild training as pytorch/examples' mnist_hogwild writes it: one model
in shared memory, several multiprocessing.Process workers (forked, no
torch.distributed, so no rank) each training it with an optimizer of its
own over a DataLoader of its own, then the parent evaluates.

    python3 torch_hogwild.py [WORKERS [STEPS]]
prints "hogwild: W workers, S steps each"."""
import sys

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 5)
        self.fc = nn.Linear(8 * 12 * 12, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return F.log_softmax(self.fc(torch.flatten(x, 1)), dim=1)


def data(seed, n):
    g = torch.Generator().manual_seed(seed)
    return TensorDataset(torch.randn(n, 1, 28, 28, generator=g),
                         torch.randint(0, 10, (n,), generator=g))


def train(rank, model, steps):
    torch.manual_seed(1 + rank)
    loader = DataLoader(data(rank, 32 * steps), batch_size=32, shuffle=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        F.nll_loss(model(x), y).backward()
        optimizer.step()


def main():
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    torch.manual_seed(0)
    model = Net()
    model.share_memory()
    procs = [mp.Process(target=train, args=(r, model, steps)) for r in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    if any(p.exitcode for p in procs):
        sys.exit("hogwild: a worker failed")
    model.eval()
    with torch.no_grad():
        x, y = data(99, 64).tensors
        model(x).argmax(1).eq(y).sum()
    print("hogwild: %d workers, %d steps each" % (workers, steps))


if __name__ == "__main__":
    main()
