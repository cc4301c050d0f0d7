"""Float32 matrix products: torchplug's GEMM (MKL or NumPy's OpenBLAS on the C pool, see
``torchplug_cpu._gemm``), NumPy's ``ndarray.dot`` (its OpenBLAS, its own threads) and PyTorch, in GFLOP/s.

Usage: ``python benchmarks/bench_gemm.py [--rounds N] [--threads N] [--shapes 256,512x784x256t,...]
[--libraries mkl,openblas] [--json PATH]``

A shape is ``d`` (a d x d square product) or ``MxKxN`` with an optional suffix: ``t`` for a transposed
second operand (``x @ weight.t()``, nn.Linear's forward), ``T`` for a transposed first one
(``grad.t() @ x``, its weight gradient).  The defaults are the squares 256-2048 and a 784-256 layer's
products on a batch of 64.  Each setup (torchplug with each library, NumPy, PyTorch) runs in a fresh
process per round, rounds interleaved, so host-speed drift hits all alike; a cell is the median over
rounds of the best rate of several calls.  ``--threads`` sets every library's thread count (default:
each one's default).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

DEFAULT_SHAPES = "256,512,1024,2048,64x784x256t,256x64x784T,64x256x784"


def _parse(shape: str) -> tuple[int, int, int, bool, bool]:
    """(m, k, n, first transposed, second transposed) of a shape spec."""
    ta, tb = shape.endswith("T"), shape.endswith("t")
    dims = [int(d) for d in shape.rstrip("tT").split("x")]
    m, k, n = dims * 3 if len(dims) == 1 else dims
    return m, k, n, ta, tb


def _best_rate(fn, flop: float, seconds: float = 0.15) -> float:
    fn()
    best = float("inf")
    deadline = time.perf_counter() + seconds
    calls = 0
    while calls < 3 or time.perf_counter() < deadline:
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
        calls += 1
    return flop / best / 1e9


def _child(setup: str, threads: int, shapes: list[str]) -> dict[str, float]:
    """GFLOP/s of every shape for one setup: 'torchplug:<library>', 'numpy' or 'torch'."""
    import numpy as np

    rng = np.random.default_rng(0)
    if setup.startswith("torchplug"):
        os.environ["TORCHPLUG_CPU_GEMM"] = setup.split(":")[1]
        import torchplug as mod
    elif setup == "torch":
        import torch as mod
    else:
        mod = None
    if threads and mod is not None:
        mod.set_num_threads(threads)
    elif threads:
        from threadpoolctl import threadpool_limits

        threadpool_limits(threads)
    rates = {}
    for shape in shapes:
        m, k, n, ta, tb = _parse(shape)
        a = rng.standard_normal((k, m) if ta else (m, k), dtype=np.float32)
        b = rng.standard_normal((n, k) if tb else (k, n), dtype=np.float32)
        if mod is not None:
            a, b = mod.from_numpy(a), mod.from_numpy(b)
        a = a.T if ta and mod is None else (a.t() if ta else a)
        b = b.T if tb and mod is None else (b.t() if tb else b)
        if mod is None:
            rates[shape] = _best_rate(lambda: a.dot(b), 2.0 * m * k * n)
        else:
            rates[shape] = _best_rate(lambda: a @ b, 2.0 * m * k * n)
    if setup.startswith("torchplug"):
        from torchplug_cpu import _gemm

        rates["library"] = _gemm.library() or "numpy"
    return rates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="thread count of every library (0: defaults)")
    parser.add_argument("--shapes", default=DEFAULT_SHAPES)
    parser.add_argument("--libraries", default="mkl,openblas", help="torchplug's GEMM libraries to time")
    parser.add_argument("--json", help="write the medians here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    shapes = [s for s in args.shapes.split(",") if s]
    if args.child:
        print(json.dumps(_child(args.child, args.threads, shapes)))
        return 0
    setups = [f"torchplug:{lib}" for lib in args.libraries.split(",") if lib] + ["numpy"]
    try:
        import torch  # noqa: F401
        setups.append("torch")
    except ImportError:
        print("# PyTorch is not installed: no torch column", file=sys.stderr)
    rates: dict[str, dict[str, list[float]]] = {}
    bound: dict[str, str] = {}
    for _ in range(args.rounds):
        for setup in setups:
            run = subprocess.run([sys.executable, __file__, "--child", setup, "--threads", str(args.threads),
                                  "--shapes", args.shapes], capture_output=True, text=True, check=True)
            got = json.loads(run.stdout)
            bound[setup] = got.pop("library", "")
            for shape, rate in got.items():
                rates.setdefault(shape, {}).setdefault(setup, []).append(rate)
    labels = [f"{s} ({bound[s]})" if bound.get(s) and not s.endswith(bound[s]) else s for s in setups]
    print(f"{'shape':<16}" + "".join(f"{lab:>22}" for lab in labels) + "   GFLOP/s, median of best per round")
    report = {}
    for shape, cells in rates.items():
        medians = {s: statistics.median(cells[s]) for s in setups}
        report[shape] = medians
        print(f"{shape:<16}" + "".join(f"{medians[s]:>22.1f}" for s in setups))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
