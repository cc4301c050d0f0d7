"""Autograd on small graphs: recording and backward cost, torchplug vs PyTorch in the same run.

Usage: ``python benchmarks/bench_autograd.py [--rounds N] [--rows SUBSTR] [--json PATH]``

On 16-element tensors the arithmetic is negligible, so these rows measure what autograd adds per
recorded op and per node of a backward: the yardstick's 5-op ``fwd+bwd`` and shapes it does not
cover (a 20-op chain, a two-layer MLP on a batch of one, a leaf used by eight ops, whose gradients
are summed before it is reached), so a speed-up is not tuned to one graph.

Each value is the best of several batches of calls, timed with the thread's CPU time
(``time.thread_time``: other jobs on a shared host steal less of it than of wall time); the
frameworks take turns row by row and round by round, and the report gives the median over rounds
and torchplug's ratio to PyTorch.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["ROWS", "make_rows", "time_call", "run", "main"]

ROWS = ("record add (a + b, a requires grad)", "fwd+bwd 5-op (peers small.fwdbwd)", "fwd+bwd 20-op chain",
        "fwd+bwd MLP 16-32-4, batch 1", "fwd+bwd leaf used by 8 ops")


def make_rows(lib: Any) -> dict[str, Callable[[], Any]]:
    """The rows' statements for ``lib`` (``torch`` or ``torchplug``), on fresh inputs."""
    lib.manual_seed(0)
    a, b = lib.randn(16), lib.randn(16)
    a.requires_grad_(True)
    x = lib.randn(16, requires_grad=True)
    w, c = lib.randn(16), lib.randn(16)
    w1 = lib.randn(32, 16, requires_grad=True)
    b1 = lib.randn(32, requires_grad=True)
    w2 = lib.randn(4, 32, requires_grad=True)
    b2 = lib.randn(4, requires_grad=True)
    inp = lib.randn(1, 16)
    ws = [lib.randn(16) for _ in range(8)]
    linear = lib.nn.functional.linear

    def record() -> Any:
        return a + b

    def fwdbwd() -> None:
        x.grad = None
        ((x * w + c).relu() * x).sum().backward()

    def chain() -> None:
        x.grad = None
        y = x
        for _ in range(10):
            y = (y * 0.5).sin()
        y.sum().backward()

    def mlp() -> None:
        for p in (w1, b1, w2, b2):
            p.grad = None
        h = linear(inp, w1, b1).relu()
        linear(h, w2, b2).sum().backward()

    def fan_out() -> None:
        x.grad = None
        total = x * ws[0]
        for v in ws[1:]:
            total = total + x * v
        total.sum().backward()

    return dict(zip(ROWS, (record, fwdbwd, chain, mlp, fan_out)))


def time_call(fn: Callable[[], Any], batch_seconds: float = 0.04, batches: int = 5) -> float:
    """Best-of-batches thread CPU microseconds per call of ``fn``."""
    for _ in range(20):  # warm up: first calls compile kernels and fill caches
        fn()
    number = 1
    while True:
        t0 = time.thread_time()
        for _ in range(number):
            fn()
        if time.thread_time() - t0 >= batch_seconds / 4:
            break
        number *= 2
    number *= 4
    best = float("inf")
    for _ in range(batches):
        t0 = time.thread_time()
        for _ in range(number):
            fn()
        best = min(best, (time.thread_time() - t0) / number)
    return best * 1e6


def run(rounds: int, only: str | None = None) -> dict[str, dict[str, float]]:
    """``{row: {framework: median microseconds}}`` for torchplug and, when installed, torch."""
    import torchplug

    libs: dict[str, Any] = {"torchplug": torchplug}
    try:
        import torch

        torch.set_num_threads(1)  # 16-element tensors: a thread pool only adds noise
        libs["torch"] = torch
    except ImportError:
        print("# torch not installed: ratios to torch are skipped", file=sys.stderr)
    rows = {fw: make_rows(lib) for fw, lib in libs.items()}
    names = [r for r in ROWS if only is None or only in r]
    samples: dict[str, dict[str, list[float]]] = {r: {fw: [] for fw in libs} for r in names}
    for _ in range(rounds):
        for r in names:
            for fw in libs:
                samples[r][fw].append(time_call(rows[fw][r]))
    return {r: {fw: statistics.median(v) for fw, v in per.items()} for r, per in samples.items()}


def report(results: dict[str, dict[str, float]]) -> str:
    fws = [fw for fw in ("torchplug", "torch") if any(fw in per for per in results.values())]
    header = f"{'row':<40}" + "".join(f"{fw + ' (us)':>16}" for fw in fws) + f"{'vs torch':>10}"
    lines = [header, "-" * len(header)]
    for r, per in results.items():
        ratio = f"{per['torchplug'] / per['torch']:>9.2f}x" if "torch" in per else f"{'-':>10}"
        lines.append(f"{r:<40}" + "".join(f"{per[fw]:>16.2f}" for fw in fws) + ratio)
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rows", help="only the rows whose name contains this text")
    parser.add_argument("--json", help="also write the medians to this file")
    args = parser.parse_args()
    results = run(args.rounds, args.rows)
    print(report(results))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
