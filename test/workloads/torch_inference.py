"""Inference as a serving script runs it: a torchvision ResNet-18 in eval
mode under torch.inference_mode(), one forward per batch, no optimizer,
no DataLoader, no backward, no steps marked.

    python3 torch_inference.py [BATCHES]
prints "inference: N batches, output (B, 1000)"."""
import sys

import torch
import torchvision


def main():
    batches = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    with torch.inference_mode():
        for _ in range(batches):
            out = model(torch.randn(2, 3, 64, 64))
    print("inference: %d batches, output %s" % (batches, tuple(out.shape)))


if __name__ == "__main__":
    main()
