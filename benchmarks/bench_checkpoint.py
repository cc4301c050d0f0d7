"""Activation checkpointing: memory kept between forward and backward, peak memory, and step time.

Usage: ``python benchmarks/bench_checkpoint.py [--depth N] [--width N] [--batch N] [--rounds N]``

A ``Sequential`` of ``depth`` (Linear(width, width), ReLU) pairs runs forward and backward on a
``batch x width`` float32 input, plainly, through ``checkpoint`` (both variants, the whole model as
one segment) and through ``checkpoint_sequential`` (sqrt(depth) segments).  The CPU allocator's
counters (``torchplug.cpu.memory_allocated`` / ``max_memory_allocated``) give the bytes allocated
and still held after the forward (what backward will need: activations, the output, bookkeeping)
and the peak during forward plus backward, both over what was allocated before the step
(parameters, the input and the previous step's gradients).  Time: median over ``rounds`` steps.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import torchplug as torch
from torchplug.utils.checkpoint import checkpoint, checkpoint_sequential


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=16)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    layers: list[torch.nn.Module] = []
    for _ in range(args.depth):
        layers += [torch.nn.Linear(args.width, args.width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers)
    x = torch.randn(args.batch, args.width, requires_grad=True)
    segments = max(2, round(math.sqrt(args.depth)))
    runs = {
        "plain": lambda: model(x),
        "checkpoint(use_reentrant=False)": lambda: checkpoint(model, x, use_reentrant=False),
        "checkpoint(use_reentrant=True)": lambda: checkpoint(model, x, use_reentrant=True),
        f"checkpoint_sequential({segments} segments)": lambda: checkpoint_sequential(model, segments, x,
                                                                                    use_reentrant=False),
    }
    activation = args.batch * args.width * 4
    print(f"{args.depth} x (Linear({args.width}, {args.width}) + ReLU), batch {args.batch}: one activation is "
          f"{activation / 2**20:.2f} MiB")
    print(f"{'':40s} {'held after forward':>20s} {'peak fwd+bwd':>14s} {'step':>10s}")
    for name, run in runs.items():
        times, held, peak = [], 0, 0
        for _ in range(args.rounds):
            model.zero_grad(set_to_none=False)
            x.grad = None
            base = torch.cpu.memory_allocated()
            torch.cpu.reset_peak_memory_stats()
            start = time.perf_counter()
            y = run()
            held = torch.cpu.memory_allocated() - base
            y.sum().backward()
            times.append(time.perf_counter() - start)
            peak = torch.cpu.max_memory_allocated() - base
            del y
        print(f"{name:40s} {held / 2**20:16.2f} MiB {peak / 2**20:10.2f} MiB {statistics.median(times) * 1e3:7.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
