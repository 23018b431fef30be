"""A module tree for with_modules and the range table: Net_0 holds two
Blocks (each two Linears) and a Linear it calls three times a step (a layer
in a loop), trained STEPS steps with two prof_tx ranges "data" a step, then
one "eval" range outside every step.
    torch_modules.py [STEPS]
"""
import sys

import torch
from torch import nn

import prof_tx


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])
        self.shared = nn.Linear(8, 8)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        for _ in range(3):
            x = self.shared(x)
        return x


steps = int(sys.argv[1]) if len(sys.argv) > 1 else 4
torch.manual_seed(0)
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for _ in range(steps):
    for _ in range(2):
        with prof_tx.range("data"):
            x = torch.randn(4, 8)
    opt.zero_grad()
    net(x).sum().backward()
    opt.step()
with prof_tx.range("eval"), torch.no_grad():
    net(torch.randn(4, 8))
print("trained", steps)
