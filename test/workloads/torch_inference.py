"""Inference as a serving script runs it: a torchvision ResNet-18 in eval
mode under torch.inference_mode(), one forward per batch, no optimizer, no
backward, no steps marked.

    python3 torch_inference.py [BATCHES [WORKERS]]
With WORKERS > 0 the batches come from a DataLoader whose worker processes
run torchvision transforms (Normalize is an nn.Module) on FakeData;
otherwise they are made in the loop. Prints "inference: N batches, output
(B, 1000)"."""
import sys

import torch
import torchvision
import torchvision.transforms as T


def batches(n, workers):
    if not workers:
        return (torch.randn(2, 3, 64, 64) for _ in range(n))
    data = torchvision.datasets.FakeData(
        size=2 * n, image_size=(3, 64, 64), random_offset=0,
        transform=T.Compose([T.ToTensor(), T.Normalize((0.5,) * 3, (0.5,) * 3)]))
    loader = torch.utils.data.DataLoader(data, batch_size=2, num_workers=workers)
    return (x for x, _ in loader)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    with torch.inference_mode():
        for x in batches(n, workers):
            out = model(x)
    print("inference: %d batches, output %s" % (n, tuple(out.shape)))


if __name__ == "__main__":
    main()
