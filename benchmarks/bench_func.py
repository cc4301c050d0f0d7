"""Per-sample gradients of a small MLP over a batch of 64: torchplug's vmap(grad) vs a Python loop of
torchplug backward passes vs torch.func (and torch's own loop), measured in the same run.

Usage: ``python benchmarks/bench_func.py [--rounds N] [--batch N] [--json PATH]``

The MLP is Linear(32, 64) -> ReLU -> Linear(64, 10) with cross-entropy, as in PyTorch's per-sample-gradients
tutorial; every variant computes the gradient of each sample's loss w.r.t. every parameter (the results
are checked against each other once).  Rounds interleave the variants so host-speed drift hits all alike;
each round keeps the best of three calls, and the report is the median over rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def _model(m: Any) -> Any:
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(32, 64), m.nn.ReLU(), m.nn.Linear(64, 10))


def _setup(m: Any, batch: int) -> tuple[Any, Any, Any]:
    rng = np.random.default_rng(0)
    data = m.tensor(rng.standard_normal((batch, 32)).astype("float32"))
    targets = m.tensor(rng.integers(0, 10, batch))
    return _model(m), data, targets


def vmap_grad(m: Any, batch: int) -> Callable[[], Any]:
    model, data, targets = _setup(m, batch)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p: Any, x: Any, t: Any) -> Any:
        out = m.func.functional_call(model, p, (x.unsqueeze(0),))
        return m.nn.functional.cross_entropy(out, t.unsqueeze(0))

    fn = m.func.vmap(m.func.grad(loss), in_dims=(None, 0, 0))
    return lambda: fn(params, data, targets)


def python_loop(m: Any, batch: int) -> Callable[[], Any]:
    model, data, targets = _setup(m, batch)
    params = list(model.parameters())
    names = [k for k, _ in model.named_parameters()]

    def run() -> Any:
        grads = []
        for i in range(batch):
            out = model(data[i].unsqueeze(0))
            loss = m.nn.functional.cross_entropy(out, targets[i].unsqueeze(0))
            grads.append(m.autograd.grad(loss, params))
        return {k: m.stack([g[j] for g in grads]) for j, k in enumerate(names)}

    return run


VARIANTS = {
    "torchplug vmap(grad)": ("torchplug", vmap_grad),
    "torchplug Python loop": ("torchplug", python_loop),
    "torch.func vmap(grad)": ("torch", vmap_grad),
    "torch Python loop": ("torch", python_loop),
}


def _best_of(fn: Callable[[], Any], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    import torchplug

    modules = {"torchplug": torchplug}
    try:
        import torch

        torch.set_num_threads(1)
        modules["torch"] = torch
    except ImportError:
        print("torch is not installed: only torchplug's variants run", file=sys.stderr)
    fns = {name: make(modules[lib], args.batch) for name, (lib, make) in VARIANTS.items() if lib in modules}
    results = {name: fn() for name, fn in fns.items()}  # warm-up, and the check that all agree
    ref = {k: np.asarray(v.detach().numpy()) for k, v in results["torchplug Python loop"].items()}
    for name, res in results.items():
        for k, v in res.items():
            np.testing.assert_allclose(np.asarray(v.detach().numpy()), ref[k], rtol=1e-4, atol=1e-5, err_msg=name)
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(args.rounds):
        for name, fn in fns.items():
            times[name].append(_best_of(fn))
    base = statistics.median(times["torchplug vmap(grad)"])
    print(f"per-sample gradients, MLP 32-64-10, batch {args.batch}, median of {args.rounds} rounds (best of 3)")
    report = {}
    for name, ts in times.items():
        med = statistics.median(ts)
        report[name] = med
        print(f"  {name:24s} {med * 1e3:9.2f} ms   {med / base:6.2f}x torchplug vmap(grad)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
