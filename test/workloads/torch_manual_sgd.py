"""Linear regression trained by hand: loss.backward() and an in-place
update under torch.no_grad(), no torch.optim optimizer (as tutorials and
research code do). prof cannot see steps here and must say so.

    torch_manual_sgd.py [STEPS]"""
import sys

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 6
torch.manual_seed(0)
true_w = torch.randn(8, 1)
w = torch.zeros(8, 1, requires_grad=True)
for _ in range(steps):
    x = torch.randn(32, 8)
    loss = (x @ w - x @ true_w).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
print("manual sgd: %d updates, loss %.4f" % (steps, loss.item()))
