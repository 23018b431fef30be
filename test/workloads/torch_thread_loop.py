"""A training loop run in a thread of its own, as servers and Ray Train run
theirs: the optimizer is built and steps there, and the main thread only
starts and joins it.

    python3 torch_thread_loop.py [STEPS]
prints "thread loop: N steps"."""
import sys
import threading

import torch


def train(steps):
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 64)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        loss = model(torch.randn(128, 64)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 25
    t = threading.Thread(target=train, args=(steps,), name="trainer")
    t.start()
    t.join()
    print("thread loop: %d steps" % steps)


if __name__ == "__main__":
    main()
