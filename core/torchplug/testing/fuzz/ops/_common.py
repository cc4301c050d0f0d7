"""Helpers shared by the fuzz op areas: dtype choice, dims, reproducer templates, NumPy canonicalizers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from torchplug.testing.fuzz._draw import Draw, dim, scalar, shape, tensor
from torchplug.testing.fuzz._spec import ALL, COMPLEX, FLOATS, INTS, REALS, Call, DtypeArg, TensorSpec

__all__ = ["Draw", "Call", "DtypeArg", "TensorSpec", "ALL", "COMPLEX", "FLOATS", "INTS", "REALS", "NUMERIC",
           "dtype", "dim", "dims", "scalar", "shape", "tensor", "index_source", "take_indices", "maybe_kw"]

NUMERIC = INTS + FLOATS + COMPLEX  # no bool


def dtype(d: Draw, good: Sequence[str], any_percent: int = 12) -> str:
    """A dtype from ``good`` (most of the time) or any dtype (an unsupported one tests the error)."""
    return d.pick(ALL) if d.chance(any_percent) else d.pick(good)


def dims(d: Draw, ndim: int, invalid: int = 4) -> tuple[int, ...]:
    """A tuple of distinct dims (sometimes a repeated or out-of-range one)."""
    n = max(ndim, 1)
    count = d.int(0, ndim)
    order = list(range(n))
    chosen = []
    for _ in range(min(count, n)):
        chosen.append(order.pop(d.int(0, len(order) - 1)))
    out = [c - n if d.chance(30) else c for c in chosen]
    if d.chance(invalid):
        out.append(out[0] if out and d.chance(50) else n + 1)
    return tuple(out)


def maybe_kw(d: Draw, percent: int, **choices: Any) -> dict[str, Any]:
    """Each keyword with ``percent`` % probability (the value is drawn from its tuple)."""
    return {k: d.pick(v) for k, v in choices.items() if d.chance(percent)}


def index_source(idx: str) -> str:
    """``x[...]`` text for an index's source: a tuple's parentheses dropped."""
    if idx.startswith("(") and idx.endswith(")") and idx != "()":
        inner = idx[1:-1]
        return inner[:-1] if inner.endswith(",") and inner.count(",") == 1 else inner
    return idx


def take_indices(x_arg: int = 0, dim_arg: int | None = 1, dim_kw: str = "dim", default: int = -1) -> Any:
    """A canonicalizer for (values, indices) results whose tied indices torch leaves unspecified
    (topk, kthvalue, sort): the indices become the input values they point at, which are unique.

    The input is argument ``x_arg``; the dim is positional ``dim_arg``, keyword ``dim_kw`` or ``default``.
    """

    def canon(call: Call, inputs: list[np.ndarray], result: Any) -> Any:
        values, indices = result[0], result[1]
        axis = call.kwargs.get(dim_kw, call.args[dim_arg] if dim_arg is not None and len(call.args) > dim_arg
                               else default)
        x = inputs[x_arg]
        if not isinstance(indices, np.ndarray) or x.ndim == 0:
            return values, indices
        try:
            picked = np.take_along_axis(x, indices.astype(np.int64), axis=axis)
        except (IndexError, ValueError) as exc:  # indices that point nowhere are themselves a finding
            return values, f"invalid indices: {exc}"
        return values, picked

    return canon
