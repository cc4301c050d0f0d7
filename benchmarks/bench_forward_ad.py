"""Forward-mode AD costs: a jvp through a small MLP against its plain forward pass, and a Hessian-vector
product by forward-over-reverse (``autograd.functional.hvp``) against double backward (``vhp``).
torchplug and PyTorch, measured in the same run.

Usage: ``python benchmarks/bench_forward_ad.py [--rounds N] [--json PATH]``

The MLP is Linear(32, 64) -> tanh -> Linear(64, 10) -> log_softmax on a batch of 64, float64. Each
round times every statement (the mean of ~30 ms of calls), statements interleaved round by round;
the report is the median over rounds, in microseconds per call.
"""

from __future__ import annotations

import argparse
import json
import statistics
import timeit
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np


def _statements(T: Any) -> dict[str, Callable[[], Any]]:
    fw = T.autograd.forward_ad
    F = T.nn.functional
    rng = np.random.default_rng(0)
    w1, b1 = T.tensor(rng.standard_normal((64, 32)) * 0.1), T.tensor(rng.standard_normal(64))
    w2 = T.tensor(rng.standard_normal((10, 64)) * 0.1)
    x, t = T.tensor(rng.standard_normal((64, 32))), T.tensor(rng.standard_normal((64, 32)))

    def mlp(a: Any) -> Any:
        return F.linear(F.linear(a, w1, b1).tanh(), w2).log_softmax(-1)

    def loss(a: Any) -> Any:
        return mlp(a).sum()

    def jvp() -> Any:
        with fw.dual_level():
            return fw.unpack_dual(mlp(fw.make_dual(x, t))).tangent

    return {
        "forward": lambda: mlp(x),
        "jvp (forward AD)": jvp,
        "hvp (forward-over-reverse)": lambda: T.autograd.functional.hvp(loss, x, t),
        "vhp (double backward)": lambda: T.autograd.functional.vhp(loss, x, t),
    }


def _time(fn: Callable[[], Any]) -> float:
    n, elapsed = 1, 0.0
    while elapsed < 0.03:
        n *= 2
        elapsed = timeit.timeit(fn, number=n)
    return elapsed / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    import torch

    import torchplug

    torch.set_num_threads(1)
    torchplug.set_num_threads(1)
    with warnings.catch_warnings():  # torch's first make_dual scripts its jvp decompositions
        warnings.simplefilter("ignore")
        libs = {"torchplug": _statements(torchplug), "torch": _statements(torch)}
        for stmts in libs.values():
            for fn in stmts.values():
                fn()
        samples: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for lib, stmts in libs.items():
                for name, fn in stmts.items():
                    samples.setdefault((lib, name), []).append(_time(fn))
    report = {f"{lib}: {name}": statistics.median(v) for (lib, name), v in samples.items()}
    names = list(libs["torch"])
    print(f"{'us per call':<28}{'torchplug':>12}{'torch':>12}")
    for name in names:
        print(f"{name:<28}{report[f'torchplug: {name}']:>12.1f}{report[f'torch: {name}']:>12.1f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
