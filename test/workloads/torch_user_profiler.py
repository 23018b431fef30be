"""A training loop that runs torch's profiler itself, twice, in the middle:
prof must step aside (stop its own operator collection) and let it work,
then collect again once each has stopped.
Prints how many events the program's own profilers saw."""
import sys

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 12

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(16, 32), torch.randint(0, 10, (16,))


def train_step():
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()


seen = []
for i in range(STEPS):
    if i == 3:
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as p:
            train_step()
            train_step()
        seen.append(len(p.events()))
        continue
    if i == 4:
        continue  # the second of the two steps above
    if i == 7:
        with torch.autograd.profiler.profile() as q:
            train_step()
        seen.append(len(q.function_events))
        continue
    train_step()
print("user profiler events", " ".join(str(n) for n in seen))
