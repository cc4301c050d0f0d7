"""Print where torchplug's autograd graph differs from PyTorch's, op by op.

For every OpInfo (``torchplug.testing.opinfos``) and each of its float64 samples, the sample is
materialized for both libraries, every floating tensor argument is made to require grad, and the
output's ``grad_fn`` tree (node type names and the ``next_functions`` structure, ``None`` entries
included) is compared.  Run it with the installed torch::

    python scripts/graph_diff.py            # one line per differing op (first differing sample)
    python scripts/graph_diff.py -v         # also print both trees
    python scripts/graph_diff.py softmax    # only OpInfos whose name contains 'softmax'

It then compares the graphs of a few small models (MLP, CNN, RNNs, a transformer layer) built with
the same weights in both libraries.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

__all__ = ["graph_tree", "compare_op", "compare_models", "main"]


def graph_tree(fn: Any, depth: int = 8) -> Any:
    """``(type name, (child trees...))`` of a grad_fn; ``None`` for a missing edge."""
    if fn is None:
        return None
    name = type(fn).__name__
    if depth == 0 or name == "AccumulateGrad":
        return (name, ())
    return (name, tuple(graph_tree(f, depth - 1) for f, _ in fn.next_functions))


def _first_tensor(out: Any, module: Any) -> Any:
    if isinstance(out, module.Tensor):
        return out
    if isinstance(out, (tuple, list)):
        for o in out:
            t = _first_tensor(o, module)
            if t is not None:
                return t
    return None


def _require_grad(value: Any, module: Any) -> Any:
    if isinstance(value, module.Tensor):
        if value.dtype.is_floating_point or value.dtype.is_complex:
            value.requires_grad_(True)
        return value
    if isinstance(value, list):
        return [_require_grad(v, module) for v in value]
    if isinstance(value, tuple):
        return tuple(_require_grad(v, module) for v in value)
    return value


def _run(op: Any, sample: Any, module: Any, dtype: str) -> Any:
    from torchplug.testing.opinfo import materialize, resolve

    args, kwargs = materialize(sample, module, "cpu", dtype)
    args = _require_grad(args, module)
    kwargs = {k: _require_grad(v, module) for k, v in kwargs.items()}
    out = resolve(module, op.path)(*args, **kwargs)
    t = _first_tensor(out, module)
    return None if t is None else graph_tree(t.grad_fn)


def compare_op(op: Any, dtype: str = "float64") -> list[tuple[str, Any, Any]]:
    """``(sample name, torch tree, torchplug tree)`` for each sample whose graphs differ."""
    import torch

    import torchplug

    diffs = []
    for sample in op.samples(dtype):
        try:
            ref = _run(op, sample, torch, dtype)
        except Exception:  # noqa: BLE001 - torch rejects the sample (an error-path sample): nothing to compare
            continue
        try:
            got = _run(op, sample, torchplug, dtype)
        except Exception as e:  # noqa: BLE001 - reported as a difference
            got = f"error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        if ref != got:
            diffs.append((sample.name, ref, got))
    return diffs


def _fmt(tree: Any, indent: str = "    ") -> str:
    if tree is None or isinstance(tree, str):
        return f"{indent}{tree}"
    name, children = tree
    lines = [f"{indent}{name}"]
    for c in children:
        lines.append(_fmt(c, indent + "  "))
    return "\n".join(lines)


def _short(tree: Any) -> str:
    if tree is None or isinstance(tree, str):
        return str(tree)
    name, children = tree
    if not children:
        return name
    return f"{name}({', '.join(_short(c) for c in children)})"


def _models(T: Any) -> dict[str, tuple[Any, Any]]:
    import numpy as np

    x = np.random.default_rng(0).standard_normal((2, 5, 4)).astype(np.float32)
    nn = T.nn
    return {
        "MLP + log_softmax": (lambda: nn.Sequential(nn.Flatten(), nn.Linear(20, 8), nn.ReLU(), nn.Linear(8, 3),
                                                    nn.LogSoftmax(1)), x),
        "CNN (conv, batchnorm, relu, maxpool, linear)": (
            lambda: nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Flatten(), nn.Linear(12, 2)), x.reshape(1, 2, 5, 4)),
        "Conv1d + tanh + adaptive pool + softmax": (
            lambda: nn.Sequential(nn.Conv1d(5, 3, 2), nn.Tanh(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(3, 2),
                                  nn.Softmax(1)), x),
        "LayerNorm": (lambda: nn.LayerNorm(4), x),
        "RNN": (lambda: nn.RNN(4, 3, batch_first=True), x),
        "GRU": (lambda: nn.GRU(4, 3, batch_first=True), x),
        "LSTM": (lambda: nn.LSTM(4, 3, batch_first=True), x),
        "TransformerEncoderLayer": (lambda: nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0, batch_first=True), x),
    }


def compare_models(depth: int = 12) -> list[tuple[str, Any, Any]]:
    """``(model, torch tree, torchplug tree)`` for each small model whose output graphs differ."""
    import torch

    import torchplug

    diffs = []
    for name in _models(torch):
        built = {}
        for T in (torch, torchplug):
            build, x = _models(T)[name]
            T.manual_seed(0)
            built[T] = (build(), T.tensor(x))
        with torchplug.no_grad():
            for p, q in zip(built[torch][0].parameters(), built[torchplug][0].parameters()):
                q.copy_(torchplug.tensor(p.detach().numpy()))
        trees = []
        for T in (torch, torchplug):
            model, x = built[T]
            try:
                y = model(x)
                trees.append(graph_tree((y[0] if isinstance(y, tuple) else y).grad_fn, depth))
            except Exception as e:  # noqa: BLE001 - reported as a difference
                trees.append(f"error: {type(e).__name__}: {e}")
        if trees[0] != trees[1]:
            diffs.append((name, trees[0], trees[1]))
    return diffs


def main(argv: list[str]) -> int:
    from torchplug.testing.opinfos import op_db

    verbose = "-v" in argv
    filters = [a for a in argv if not a.startswith("-")]
    warnings.simplefilter("ignore")
    n_ops = n_diff = 0
    for op in op_db():
        if filters and not any(f in op.name for f in filters):
            continue
        dtype = "float64" if "float64" in op.dtypes else ("float32" if "float32" in op.dtypes else None)
        if dtype is None or op.random:
            continue
        n_ops += 1
        diffs = compare_op(op, dtype)
        if not diffs:
            continue
        n_diff += 1
        sample, ref, got = diffs[0]
        print(f"{op.name} [{sample}] ({len(diffs)} sample(s))")
        if verbose:
            print("  torch:\n" + _fmt(ref) + "\n  torchplug:\n" + _fmt(got))
        else:
            print(f"  torch:     {_short(ref)}\n  torchplug: {_short(got)}")
    print(f"{n_diff} of {n_ops} ops differ")
    if filters:
        return 0
    diffs = compare_models()
    for name, ref, got in diffs:
        print(f"model {name}")
        if verbose:
            print("  torch:\n" + _fmt(ref) + "\n  torchplug:\n" + _fmt(got))
        else:
            print(f"  torch:     {_short(ref)[:400]}\n  torchplug: {_short(got)[:400]}")
    print(f"{len(diffs)} of {len(_models(__import__('torch')))} models differ")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
