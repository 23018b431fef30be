"""A GAN-like loop: a discriminator (Adam) and a generator (SGD) on random
data, D.step() then G.step() every iteration, as GAN tutorials write it.

    torch_gan.py [ITERATIONS]
Prints "gan: N iterations"."""
import sys

import torch
from torch import nn

N = int(sys.argv[1]) if len(sys.argv) > 1 else 6
torch.manual_seed(0)
G = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))
D = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
opt_g = torch.optim.SGD(G.parameters(), lr=1e-2)
bce = nn.BCEWithLogitsLoss()
for _ in range(N):
    real, z = torch.randn(32, 16), torch.randn(32, 8)
    fake = G(z)
    opt_d.zero_grad()
    loss_d = bce(D(real), torch.ones(32, 1)) + bce(D(fake.detach()), torch.zeros(32, 1))
    loss_d.backward()
    opt_d.step()
    opt_g.zero_grad()
    loss_g = bce(D(fake), torch.ones(32, 1))
    loss_g.backward()
    opt_g.step()
print("gan: %d iterations" % N)
