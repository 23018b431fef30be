"""A small image classifier as torchvision users write one: FakeData
through a DataLoader with worker processes, a CNN, SGD with momentum,
then a short evaluation loop under torch.no_grad().

    torch_cnn_fakedata.py [--steps 6] [--workers 2] [--batch 8]
Prints "trained N steps, loss L, evaluated M batches"."""
import argparse

import torch
import torchvision
from torch import nn
from torchvision import transforms


def model():
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(16, 10))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=8)
    args = ap.parse_args()
    torch.manual_seed(0)
    data = torchvision.datasets.FakeData(size=args.steps * args.batch, image_size=(3, 32, 32),
                                         num_classes=10, transform=transforms.ToTensor())
    loader = torch.utils.data.DataLoader(data, batch_size=args.batch, shuffle=True,
                                         num_workers=args.workers)
    net = model()
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    steps = 0
    for x, y in loader:
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        steps += 1
    net.eval()
    evaluated = 0
    with torch.no_grad():
        for x, _ in loader:
            net(x)
            evaluated += 1
            if evaluated == 2:
                break
    print("trained %d steps, loss %.4f, evaluated %d batches" % (steps, loss.item(), evaluated))


if __name__ == "__main__":
    main()
