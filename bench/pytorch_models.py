#!/usr/bin/python3
"""Prints PyTorch's CPU seconds per inference of a network bench_models runs (random weights, the
architectures scripts/make_models.py writes, which are torchvision's). Used only when torch is
installed; the host thread count is TESSERA_THREADS, as Tessera's, else all hardware threads.
Prints two numbers: median seconds of wall time and of process CPU time per inference.

With --threads-2-vs-1 it runs the network at one and two threads in turn (alternating order, 40
pairs, as bench_models' threads_2_vs_1 cases do) and prints three one-thread / two-thread ratios:
the median of the pairs' ratios, the ratio of medians and the ratio of minima.

Usage: /usr/bin/python3 bench/pytorch_models.py [--threads-2-vs-1] resnet_small|resnet18|mobilenet_v2|squeezenet1_1|resnet50
"""
import os
import sys
import time

# OpenMP sizes its pool when torch loads: a pool wider than the thread count asked for keeps a
# thread spinning beside the one that works (MobileNetV2 at one thread: twice the CPU
# time, a third more wall time), so the pool is capped before the import.
os.environ["OMP_NUM_THREADS"] = (
    "2" if "--threads-2-vs-1" in sys.argv else os.environ.get("TESSERA_THREADS", str(os.cpu_count())))

import torch  # noqa: E402 (after the OpenMP setting)
import torch.nn as nn  # noqa: E402


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


class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride):
        super().__init__()
        cout = width * 4
        self.body = nn.Sequential(
            nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
            nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return torch.relu(self.body(x) + (self.short(x) if self.short is not None else x))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = []
        if expand != 1:
            layers += [nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6()]
        layers += [nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
                   nn.BatchNorm2d(hidden), nn.ReLU6(),
                   nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


class Fire(nn.Module):
    def __init__(self, cin, squeeze, e1, e3):
        super().__init__()
        self.s = nn.Conv2d(cin, squeeze, 1)
        self.e1 = nn.Conv2d(squeeze, e1, 1)
        self.e3 = nn.Conv2d(squeeze, e3, 3, padding=1)

    def forward(self, x):
        s = torch.relu(self.s(x))
        return torch.cat([torch.relu(self.e1(s)), torch.relu(self.e3(s))], 1)


def resnet(size, stem, widths, blocks, classes):
    big = size >= 64
    layers = [nn.Conv2d(3, stem, 7 if big else 3, 2 if big else 1, 3 if big else 1, bias=False),
              nn.BatchNorm2d(stem), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = stem
    for stage, (w, n) in enumerate(zip(widths, blocks)):
        for i in range(n):
            layers.append(Block(cin, w, 2 if (i == 0 and stage > 0) else 1))
            cin = w
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


def resnet50():
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for stage, (w, n) in enumerate(zip([64, 128, 256, 512], [3, 4, 6, 3])):
        for i in range(n):
            layers.append(Bottleneck(cin, w, 2 if (i == 0 and stage > 0) else 1))
            cin = w * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000)]
    return nn.Sequential(*layers)


def mobilenet_v2():
    layers = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6()]
    cin = 32
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                       (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
            cin = c
    layers += [nn.Conv2d(cin, 1280, 1, bias=False), nn.BatchNorm2d(1280), nn.ReLU6(),
               nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1280, 1000)]
    return nn.Sequential(*layers)


def squeezenet1_1():
    return nn.Sequential(
        nn.Conv2d(3, 64, 3, 2), nn.ReLU(), nn.MaxPool2d(3, 2, ceil_mode=True),
        Fire(64, 16, 64, 64), Fire(128, 16, 64, 64), nn.MaxPool2d(3, 2, ceil_mode=True),
        Fire(128, 32, 128, 128), Fire(256, 32, 128, 128), nn.MaxPool2d(3, 2, ceil_mode=True),
        Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256),
        Fire(512, 64, 256, 256), nn.Conv2d(512, 1000, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten())


MODELS = {
    "resnet_small": (lambda: resnet(32, 16, [16, 32, 64], [1, 1, 1], 10), 32),
    "resnet18": (lambda: resnet(224, 64, [64, 128, 256, 512], [2, 2, 2, 2], 1000), 224),
    "mobilenet_v2": (mobilenet_v2, 224),
    "squeezenet1_1": (squeezenet1_1, 224),
    "resnet50": (resnet50, 224),
}


def thread_scaling(model, x):
    one, two, ratios = [], [], []
    for i in range(40):
        for n in ((1, 2) if i % 2 == 0 else (2, 1)):
            torch.set_num_threads(n)
            start = time.perf_counter()
            model(x)
            (one if n == 1 else two).append(time.perf_counter() - start)
        ratios.append(one[-1] / two[-1])
    median = lambda v: sorted(v)[len(v) // 2]
    print(median(ratios), median(one) / median(two), min(one) / min(two))


def main():
    args = sys.argv[1:]
    scaling = "--threads-2-vs-1" in args
    args = [a for a in args if a != "--threads-2-vs-1"]
    name = args[0] if args else "resnet18"
    if name not in MODELS:
        sys.exit(f"pytorch_models.py: unknown network '{name}'; one of {', '.join(MODELS)}")
    make, size = MODELS[name]
    model = make().eval()
    torch.set_num_threads(int(os.environ.get("TESSERA_THREADS", os.cpu_count())))
    x = torch.randn(1, 3, size, size)
    with torch.no_grad():
        for _ in range(3):
            model(x)
        if scaling:
            thread_scaling(model, x)
            return
        # The median of single runs, in wall time and in the process's CPU time (all threads): the
        # host may be shared, and CPU time is what others' load disturbs least.
        wall, cpu = [], []
        for _ in range(15):
            start, start_cpu = time.perf_counter(), time.process_time()
            model(x)
            wall.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        print(sorted(wall)[len(wall) // 2], sorted(cpu)[len(cpu) // 2])


if __name__ == "__main__":
    main()
