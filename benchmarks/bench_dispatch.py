"""Per-call cost of small ops: torchplug vs NumPy vs PyTorch, measured in the same run.

Usage: ``python benchmarks/bench_dispatch.py [--rounds N] [--threads N] [--rows SUBSTR] [--json PATH]``

``--threads N`` gives PyTorch's intra-op pool and NumPy's BLAS (through threadpoolctl) the same
number of threads, so the training rows compare the frameworks rather than their thread settings.

Each row times one statement on 16-element float32 inputs (the dispatch-overhead regime) for
every framework present, interleaving frameworks round by round so host-speed drift hits all
of them alike.  The per-round value is the best of several ~50 ms batches; the report is the
median over rounds, and the ratios compare torchplug with each peer.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import timeit
from collections.abc import Callable

ROWS: dict[str, str] = {
    "add (a + b, 16 f32)": "a + b",
    "sum (a.sum(), 16 f32)": "a.sum()",
    "mul scalar (a * 2.0)": "a * 2.0",
    "relu": "relu(a)",
    "matmul 8x8": "m @ m",
    "view/transpose (m.t())": "m.t()",
    "index (m[0])": "m[0]",
    # NN rows (not the 16-element regime): the functions come from torchplug.nn.functional when present
    "conv2d 64x1x8x8 (8x1x3x3)": "conv2d(img, wconv)",
    "softmax+cross-ent 64x10": "softmax(z, 1); cross_entropy(z, y)",
    # peers.py small.fwdbwd: a 5-op chain forward + backward; x (16 f32) requires grad
    "fwd+bwd 5-op chain": "x.grad = None; ((x * w + b).relu() * x).sum().backward()",
}
_FWDBWD = ROWS["fwd+bwd 5-op chain"]
# Names an NN row needs; a framework whose environment lacks one reports the row as "missing".
NEEDS: dict[str, tuple[str, ...]] = {
    "conv2d 64x1x8x8 (8x1x3x3)": ("conv2d",),
    "softmax+cross-ent 64x10": ("softmax", "cross_entropy"),
}
# Training steps (peers.py mlp.step / cnn.step, SGD lr 0.01): zero_grad, forward, cross_entropy, backward,
# step on one fixed batch of 64.  Reported in steps/s; the ratio is torchplug's steps/s over torch's.
TRAINING: dict[str, str] = {
    "mlp.step 784-256-10 b64": "mlp_step()",
    "cnn.step 8x8 b64": "cnn_step()",
}
NEEDS.update({"mlp.step 784-256-10 b64": ("mlp_step",), "cnn.step 8x8 b64": ("cnn_step",)})


def setups() -> dict[str, Callable[[], dict[str, object]]]:
    def numpy_env() -> dict[str, object]:
        import numpy as np

        a = np.random.rand(16).astype(np.float32)
        m = np.random.rand(8, 8).astype(np.float32)

        def fwdbwd(x: object, w: object, b: object) -> object:  # hand-written gradient, as in peers.py
            u = x * w + b
            r = np.maximum(u, 0)
            (r * x).sum()
            return r + x * w * (u > 0)

        return {"a": a, "b": a.copy(), "m": m, "relu": lambda x: np.maximum(x, 0), "x": a.copy(), "w": a.copy(),
                "fwdbwd": fwdbwd,
                "_rename": {"m.t()": "m.T", _FWDBWD: "fwdbwd(x, w, b)"}}  # NumPy spelling of the same statement

    def torch_env() -> dict[str, object]:
        import torch

        import torch.nn.functional as F

        return {"a": torch.rand(16), "b": torch.rand(16), "m": torch.rand(8, 8), "relu": torch.relu,
                **_nn_env(torch, F), **_grad_env(torch), **_train_env(torch)}

    def torchplug_env() -> dict[str, object]:
        import torchplug

        try:
            import torchplug.nn.functional as F
        except Exception:  # noqa: BLE001 - the NN functions may not exist yet: their rows say "missing"
            F = None
        return {"a": torchplug.rand(16), "b": torchplug.rand(16), "m": torchplug.rand(8, 8), "relu": torchplug.relu,
                **_nn_env(torchplug, F), **_grad_env(torchplug), **_train_env(torchplug)}

    found = {"numpy": numpy_env, "torchplug": torchplug_env}
    try:
        import torch  # noqa: F401

        found["torch"] = torch_env
    except ImportError:
        print("# torch not installed: ratios to torch are skipped", file=sys.stderr)
    return found


def _grad_env(lib: object) -> dict[str, object]:
    """Inputs of the fwd+bwd row: ``x`` requires grad (``b`` is the 16-element ``b`` above)."""
    return {"x": lib.randn(16, requires_grad=True), "w": lib.rand(16)}  # type: ignore[attr-defined]


def _nn_env(lib: object, functional: object) -> dict[str, object]:
    """Inputs of the NN rows and whichever of conv2d/softmax/cross_entropy ``functional`` has."""
    env: dict[str, object] = {
        "img": lib.rand(64, 1, 8, 8), "wconv": lib.rand(8, 1, 3, 3),  # type: ignore[attr-defined]
        "z": lib.randn(64, 10), "y": lib.randint(0, 10, (64,)),  # type: ignore[attr-defined]
    }
    for name in ("conv2d", "softmax", "cross_entropy"):
        fn = getattr(functional, name, None) if functional is not None else None
        if fn is not None:
            env[name] = fn
    return env


def _train_env(lib: object) -> dict[str, object]:
    """``mlp_step`` and ``cnn_step`` (one SGD training step each), or neither if ``lib`` lacks nn/optim."""
    try:
        nn, optim = lib.nn, lib.optim  # type: ignore[attr-defined]
        cross_entropy = nn.functional.cross_entropy
    except Exception:  # noqa: BLE001 - reported as "missing"
        return {}

    def make_step(model: object, x: object, y: object) -> Callable[[], None]:
        opt = optim.SGD(model.parameters(), lr=0.01)  # type: ignore[attr-defined]

        def step() -> None:
            opt.zero_grad()
            loss = cross_entropy(model(x), y)  # type: ignore[operator]
            loss.backward()
            opt.step()
        return step

    lib.manual_seed(0)  # type: ignore[attr-defined]
    mlp = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    cnn = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(72, 10))
    y = lib.randint(0, 10, (64,))  # type: ignore[attr-defined]
    return {"mlp_step": make_step(mlp, lib.randn(64, 784), y),  # type: ignore[attr-defined]
            "cnn_step": make_step(cnn, lib.randn(64, 1, 8, 8), y)}  # type: ignore[attr-defined]


def time_stmt(stmt: str, env: dict[str, object], batch_seconds: float = 0.05, batches: int = 5) -> float | None:
    """Best-of-batches microseconds per call, or None if the statement fails."""
    try:
        timer = timeit.Timer(stmt, globals=env)
        number, _ = timer.autorange()
        number = max(1, int(number * batch_seconds / 0.2))
        best = min(timer.repeat(repeat=batches, number=number)) / number
    except Exception as exc:  # noqa: BLE001 - report and continue with other rows
        print(f"# {stmt!r} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return None
    return best * 1e6


def limit_threads(n: int) -> str:
    """Give PyTorch and every BLAS NumPy loaded ``n`` threads; returns what was set, for the report."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=n)  # kept for the process: NumPy's and SciPy's OpenBLAS (and torch's, if any)
    try:
        import torch

        torch.set_num_threads(n)
    except ImportError:
        pass
    return f"# threads: {n} for torch and for NumPy's BLAS"


def run(rounds: int, only: str | None = None, threads: int | None = None) -> dict[str, dict[str, float | None]]:
    frameworks = setups()
    envs = {name: make() for name, make in frameworks.items()}
    if threads:  # after the imports: threadpoolctl limits only the libraries already loaded
        print(limit_threads(threads))
    rows = {row: stmt for row, stmt in {**ROWS, **TRAINING}.items() if only is None or only in row}
    samples: dict[str, dict[str, list[float]]] = {row: {fw: [] for fw in envs} for row in rows}
    for _ in range(rounds):
        for row, stmt in rows.items():
            for fw, env in envs.items():
                if any(name not in env for name in NEEDS.get(row, ())):
                    continue  # reported as "missing"
                actual = env.get("_rename", {}).get(stmt, stmt)  # type: ignore[union-attr]
                value = time_stmt(actual, env)
                if value is not None:
                    samples[row][fw].append(value)
    return {row: {fw: (statistics.median(v) if v else None) for fw, v in per.items()} for row, per in samples.items()}


def report(results: dict[str, dict[str, float | None]]) -> str:
    fws = [fw for fw in ("torchplug", "torch", "numpy") if any(fw in r for r in results.values())]
    header = f"{'metric':<26}" + "".join(f"{fw + ' (us)':>16}" for fw in fws) + f"{'vs torch':>10}{'vs numpy':>10}"
    lines = [header, "-" * len(header)]
    for row, per in results.items():
        if row in TRAINING:
            continue  # in report_training's table
        cells = "".join(f"{per.get(fw):>16.2f}" if per.get(fw) is not None
                        else f"{'missing' if row in NEEDS and fw != 'numpy' else '-':>16}" for fw in fws)
        ours = per.get("torchplug")
        ratio_t = f"{ours / per['torch']:>9.2f}x" if ours and per.get("torch") else f"{'-':>10}"
        ratio_n = f"{ours / per['numpy']:>9.2f}x" if ours and per.get("numpy") else f"{'-':>10}"
        lines.append(f"{row:<26}{cells}{ratio_t}{ratio_n}")
    return "\n".join(lines)


def report_training(results: dict[str, dict[str, float | None]]) -> str:
    """The training rows in steps/s (results hold microseconds per step), with torchplug/torch ratios."""
    fws = [fw for fw in ("torchplug", "torch") if any(fw in results.get(r, {}) for r in TRAINING)]
    header = f"{'training step':<26}" + "".join(f"{fw + ' (steps/s)':>20}" for fw in fws) + f"{'vs torch':>10}"
    lines = [header, "-" * len(header)]
    for row in TRAINING:
        if row not in results:
            continue  # filtered out by --rows
        per = results.get(row, {})
        rate = {fw: (1e6 / per[fw] if per.get(fw) else None) for fw in fws}
        cells = "".join(f"{rate[fw]:>20.1f}" if rate[fw] is not None else f"{'missing':>20}" for fw in fws)
        ours, theirs = rate.get("torchplug"), rate.get("torch")
        ratio = f"{ours / theirs:>9.2f}x" if ours and theirs else f"{'-':>10}"
        lines.append(f"{row:<26}{cells}{ratio}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, help="threads for torch and NumPy's BLAS (default: their own)")
    parser.add_argument("--rows", help="only the rows whose name contains this text")
    parser.add_argument("--json", help="also write the medians to this file")
    args = parser.parse_args()
    results = run(args.rounds, args.rows, args.threads)
    print(report(results))
    print()
    print(report_training(results))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
