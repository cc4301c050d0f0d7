"""Large elementwise, reduction and copy ops at several sizes: torchplug on one thread and on the
default thread count, and PyTorch on the default thread count, measured in the same run.

Usage: ``python benchmarks/bench_parallel.py [--rounds N] [--sizes 262144,1048576,...] [--mm-sizes 8,24,...]
[--rows TEXT] [--json PATH]``

Rows run for every size (float32): ``a + b``, ``add(a, b, out=c)``, ``a * 2.0``, ``sqrt(a)``,
``exp(a)``, ``tanh(a)``, ``sigmoid(a)``, ``relu(a)``, ``a.sum()``, ``a.mean()``, ``a.clone()`` and a copy
whose rows are contiguous, ``m[:, 1:].contiguous()`` on a (size/1024, 1024) matrix; dim reductions
``m.sum(1)``/``m.amax(1)`` over the rows of that matrix and ``b.sum(1)``/``b.amax(1)`` over the middle dim
of a (64, size/1024, 16) block, and ``softmax(m, -1)``.  Matrix products run for every ``--mm-sizes``
entry d: ``A @ B`` (d x d), ``A @ B.t()`` and ``A.t() @ B`` (transposed operands), and an
``nn.Linear(d, d)`` forward+backward on a batch of 64.  ``--rows`` keeps the rows whose name contains
the text.  Each cell is the median over
rounds of the best of several calls; the libraries and thread settings are interleaved round by
round so host-speed drift hits all alike, each in a fresh process of its own.  Ratios are
torchplug's time on the default thread count over PyTorch's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

ROWS: dict[str, Callable[[object, int], Callable[[], object]]] = {}


def _row(name: str) -> Callable[[Callable], Callable]:
    def add(make: Callable) -> Callable:
        ROWS[name] = make
        return make

    return add


@_row("a + b")
def _add(m, n):
    a, b = m.rand(n), m.rand(n)
    return lambda: a + b


@_row("add(a, b, out=c)")
def _add_out(m, n):
    a, b, c = m.rand(n), m.rand(n), m.empty(n)
    return lambda: m.add(a, b, out=c)


@_row("a * 2.0")
def _mul_scalar(m, n):
    a = m.rand(n)
    return lambda: a * 2.0


@_row("sqrt(a)")
def _sqrt(m, n):
    a = m.rand(n)
    return lambda: m.sqrt(a)


@_row("a.sum()")
def _sum(m, n):
    a = m.rand(n)
    return lambda: a.sum()


@_row("a.mean()")
def _mean(m, n):
    a = m.rand(n)
    return lambda: a.mean()


@_row("a.clone()")
def _clone(m, n):
    a = m.rand(n)
    return lambda: a.clone()


@_row("m[:, 1:].contiguous()")
def _rows(m, n):
    x = m.rand(max(n // 1024, 1), 1024)
    return lambda: x[:, 1:].contiguous()


@_row("exp(a)")
def _exp(m, n):
    a = m.rand(n)
    return lambda: m.exp(a)


@_row("tanh(a)")
def _tanh(m, n):
    a = m.rand(n)
    return lambda: m.tanh(a)


@_row("sigmoid(a)")
def _sigmoid(m, n):
    a = m.rand(n)
    return lambda: m.sigmoid(a)


@_row("relu(a)")
def _relu(m, n):
    a = m.rand(n) - 0.5
    return lambda: m.relu(a)


@_row("m.sum(1)")
def _row_sum(m, n):
    x = m.rand(max(n // 1024, 1), 1024)
    return lambda: x.sum(1)


@_row("m.amax(1)")
def _row_amax(m, n):
    x = m.rand(max(n // 1024, 1), 1024)
    return lambda: x.amax(1)


@_row("b.sum(1)")
def _mid_sum(m, n):
    x = m.rand(64, max(n // 1024, 1), 16)
    return lambda: x.sum(1)


@_row("b.amax(1)")
def _mid_amax(m, n):
    x = m.rand(64, max(n // 1024, 1), 16)
    return lambda: x.amax(1)


@_row("softmax(m, -1)")
def _softmax(m, n):
    x = m.rand(max(n // 1024, 1), 1024)
    return lambda: m.softmax(x, -1)


MM_ROWS: dict[str, Callable[[object, int], Callable[[], object]]] = {}


def _mm_row(name: str) -> Callable[[Callable], Callable]:
    def add(make: Callable) -> Callable:
        MM_ROWS[name] = make
        return make

    return add


@_mm_row("A @ B")
def _mm(m, d):
    a, b = m.randn(d, d), m.randn(d, d)
    return lambda: a @ b


@_mm_row("A @ B.t()")
def _mm_bt(m, d):
    a, b = m.randn(d, d), m.randn(d, d)
    return lambda: a @ b.t()


@_mm_row("A.t() @ B")
def _mm_at(m, d):
    a, b = m.randn(d, d), m.randn(d, d)
    return lambda: a.t() @ b


@_mm_row("Linear fwd+bwd")
def _linear(m, d):
    lin = m.nn.Linear(d, d)
    x = m.randn(64, d, requires_grad=True)

    def step():
        lin.zero_grad()
        x.grad = None
        lin(x).sum().backward()

    return step


def _best(fn: Callable[[], object], seconds: float = 0.05) -> float:
    fn()
    best = float("inf")
    deadline = time.perf_counter() + seconds
    calls = 0
    while calls < 3 or time.perf_counter() < deadline:
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
        calls += 1
    return best


def _child(lib: str, threads: int, sizes: list[int], mm_sizes: list[int], keep: str) -> dict[str, float]:
    """One round of every row in this process: ``lib`` ('torchplug' or 'torch') on ``threads`` threads."""
    mod = __import__(lib)
    mod.set_num_threads(threads)
    out = {f"{row} {n}": _best(make(mod, n)) for n in sizes for row, make in ROWS.items() if keep in row}
    out.update({f"{row} {d}": _best(make(mod, d)) for d in mm_sizes for row, make in MM_ROWS.items() if keep in row})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="262144,1048576,4194304,16777216")
    parser.add_argument("--mm-sizes", default="8,24,96,256,512", help="matrix sizes d of the product rows")
    parser.add_argument("--rows", default="", help="only the rows whose name contains this text")
    parser.add_argument("--json", help="write the medians here")
    parser.add_argument("--child", nargs=2, metavar=("LIB", "THREADS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    mm_sizes = [int(s) for s in args.mm_sizes.split(",") if s]
    if args.child:
        print(json.dumps(_child(args.child[0], int(args.child[1]), sizes, mm_sizes, args.rows)))
        return 0

    import torchplug

    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: nothing to compare with", file=sys.stderr)
        return 1
    default, torch_default = torchplug.get_num_threads(), torch.get_num_threads()
    # each library in its own process, as OpenMP's spinning workers and the pool's would share cores
    setups = {"torchplug 1 thread": ("torchplug", 1), f"torchplug {default} threads": ("torchplug", default),
              f"torch {torch_default} threads": ("torch", torch_default)}
    times: dict[str, dict[str, list[float]]] = {}
    for _ in range(args.rounds):
        for label, (lib, threads) in setups.items():
            run = subprocess.run([sys.executable, __file__, "--child", lib, str(threads), "--sizes", args.sizes,
                                  "--mm-sizes", args.mm_sizes, "--rows", args.rows],
                                 capture_output=True, text=True, check=True)
            for key, seconds in json.loads(run.stdout).items():
                times.setdefault(key, {}).setdefault(label, []).append(seconds)
    labels = list(setups)
    print(f"{'row':<24}{'size':>10}" + "".join(f"{lab + ' ms':>24}" for lab in labels) + f"{'vs torch':>10}")
    report: dict[str, dict[str, float]] = {}
    for key, cells in times.items():
        row, n = key.rsplit(" ", 1)
        medians = {lab: statistics.median(cells[lab]) * 1e3 for lab in labels}
        medians["ratio"] = medians[labels[1]] / medians[labels[2]]
        report[key] = medians
        print(f"{row:<24}{n:>10}" + "".join(f"{medians[lab]:>24.3f}" for lab in labels) + f"{medians['ratio']:>10.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
