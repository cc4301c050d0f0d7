"""Bulk random numbers: torchplug's CPU stream (PyTorch's, bit for bit) vs PyTorch, measured in the same run.

Usage: ``python benchmarks/bench_random.py [--rounds N] [--size N] [--json PATH]``

Each row fills ``size`` (10M by default) values after the same seed in both libraries (the
values are checked equal once), interleaving the libraries round by round so host-speed drift
hits both alike.  The per-round value is the best of three calls; the report is the median over
rounds and the ratio is torchplug's time over PyTorch's (the target is at most 2).  PyTorch's CPU
generator is serial (one mt19937 under a lock), so its thread count does not matter here.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable

ROWS: dict[str, Callable[[object, int], object]] = {
    "rand float32": lambda m, n: m.rand(n),
    "randn float32": lambda m, n: m.randn(n),
    "rand float64": lambda m, n: m.rand(n, dtype=m.float64),
    "randn float64": lambda m, n: m.randn(n, dtype=m.float64),
    "randint int64 [0, 1000)": lambda m, n: m.randint(0, 1000, (n,)),
    "bernoulli_ 0.5": lambda m, n: m.empty(n).bernoulli_(0.5),
}


def _best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size", type=int, default=10_000_000)
    parser.add_argument("--json", help="write the medians and ratios here")
    args = parser.parse_args(argv)

    import numpy as np

    import torchplug as tp

    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: nothing to compare with", file=sys.stderr)
        return 1
    torch.set_num_threads(1)
    n = args.size
    report: dict[str, dict[str, float]] = {}
    print(f"{'row':<26}{'torchplug ms':>14}{'torch ms':>12}{'ratio':>8}")
    for name, make in ROWS.items():
        torch.manual_seed(0)
        tp.manual_seed(0)
        if not np.array_equal(make(torch, n).numpy(), make(tp, n).numpy()):
            print(f"{name}: values differ from PyTorch's", file=sys.stderr)
            return 1
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(args.rounds):
            ours.append(_best_of(lambda: make(tp, n)))
            theirs.append(_best_of(lambda: make(torch, n)))
        a, b = statistics.median(ours), statistics.median(theirs)
        report[name] = {"torchplug_ms": a * 1e3, "torch_ms": b * 1e3, "ratio": a / b}
        print(f"{name:<26}{a * 1e3:>14.1f}{b * 1e3:>12.1f}{a / b:>8.2f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"size": n, "rounds": args.rounds, "rows": report}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
