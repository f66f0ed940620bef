#!/usr/bin/python3
"""Prints PyTorch's CPU seconds per inference of the network bench_models runs (random weights,
same architecture as scripts/make_models.py). Used only when torch is installed."""
import os
import sys
import time

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return torch.relu(y + (self.short(x) if self.short is not None else x))


def net(size, stem, widths, blocks, classes):
    big = size >= 64
    layers = [nn.Conv2d(3, stem, 7 if big else 3, 2 if big else 1, 3 if big else 1, bias=False),
              nn.BatchNorm2d(stem), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = stem
    for stage, (w, n) in enumerate(zip(widths, blocks)):
        for i in range(n):
            layers.append(Block(cin, w, 2 if (i == 0 and stage > 0) else 1))
            cin = w
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers).eval()


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "resnet18"
    if name == "resnet18":
        model, size = net(224, 64, [64, 128, 256, 512], [2, 2, 2, 2], 1000), 224
    else:
        model, size = net(32, 16, [16, 32, 64], [1, 1, 1], 10), 32
    # The same number of host threads as Tessera's simulator uses (TESSERA_THREADS, else all).
    torch.set_num_threads(int(os.environ.get("TESSERA_THREADS", os.cpu_count())))
    x = torch.randn(1, 3, size, size)
    with torch.no_grad():
        for _ in range(3):
            model(x)
        runs = 10
        start = time.perf_counter()
        for _ in range(runs):
            model(x)
        print((time.perf_counter() - start) / runs)


if __name__ == "__main__":
    main()
