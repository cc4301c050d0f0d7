"""Fuzzed creation ops (zeros/ones/full/arange/linspace/eye/tensor/empty and the ``_like`` forms),
sorting (sort/argsort/topk/kthvalue), products (matmul/mm/bmm) and dtype casts."""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug.testing.fuzz._table import FuzzOp
from torchplug.testing.fuzz.ops._common import (
    ALL, COMPLEX, FLOATS, INTS, NUMERIC, REALS, Call, Draw, DtypeArg, dim, dtype, scalar, shape, take_indices, tensor,
)

__all__ = ["OPS"]


def _dtype_kw(d: Draw, percent: int = 50) -> dict[str, Any]:
    return {"dtype": DtypeArg(d.pick(ALL))} if d.chance(percent) else {}


def _size(d: Draw) -> Any:
    shp = shape(d, max_dims=3)
    if d.chance(5):
        shp = shp + (-1,)
    return list(shp) if d.chance(20) else shp


def _fill(name: str) -> FuzzOp:
    def gen(d: Draw) -> Call:
        return Call(name, (_size(d),), _dtype_kw(d))

    return FuzzOp(name, gen, tol="exact", factory=True)


def _full(d: Draw) -> Call:
    return Call("full", (_size(d), scalar(d, "any")), _dtype_kw(d))


def _arange(d: Draw) -> Call:
    kind = d.pick(("int", "int", "float"))
    values = [scalar(d, kind) if kind == "int" else d.int(-16, 16) / 4 for _ in range(d.int(1, 3))]
    if len(values) == 3 and d.chance(70) and values[2] == 0:
        values[2] = 1
    if len(values) == 3 and (values[1] - values[0]) * values[2] < 0 and d.chance(80):
        values[2] = -values[2]
    return Call("arange", tuple(values), _dtype_kw(d, 30))


def _linspace(d: Draw) -> Call:
    start, end = d.int(-16, 16) / 4, d.int(-16, 16) / 4
    steps = d.int(0, 7) if not d.chance(5) else -1
    return Call("linspace", (start, end, steps), _dtype_kw(d, 35))


def _eye(d: Draw) -> Call:
    args: tuple[Any, ...] = (d.int(0, 5) if not d.chance(5) else -1,)
    if d.chance(50):
        args += (d.int(0, 5),)
    return Call("eye", args, _dtype_kw(d, 40))


def _nested(d: Draw, shp: tuple[int, ...], kind: str) -> Any:
    if not shp:
        return scalar(d, kind if kind != "mixed" else d.pick(("int", "float", "bool")))
    out = [_nested(d, shp[1:], kind) for _ in range(shp[0])]
    if d.chance(3) and out:
        out.append(out[0] if not isinstance(out[0], list) else out[0][:-1])  # ragged
    return out


def _tensor(d: Draw) -> Call:
    shp = shape(d, max_dims=3, max_side=3)
    data = _nested(d, shp, d.pick(("int", "float", "bool", "complex", "mixed")))
    return Call("tensor", (data,), _dtype_kw(d, 30))


def _like(name: str) -> FuzzOp:
    def gen(d: Draw) -> Call:
        x = tensor(d, shape(d), dtype(d, ALL, any_percent=0))
        args: tuple[Any, ...] = (x, scalar(d, "any")) if name == "full_like" else (x,)
        return Call(name, args, _dtype_kw(d, 40))

    return FuzzOp(name, gen, tol="exact")


def _empty_canon(call: Call, inputs: list[np.ndarray], result: Any) -> Any:
    return tuple(result.shape), str(result.dtype)  # the values are unspecified


# ---- sorting ----------------------------------------------------------------------------------------------------------
def _sort(d: Draw) -> Call:
    shp = shape(d)
    kwargs: dict[str, Any] = {"dim": dim(d, len(shp))}
    if d.chance(40):
        kwargs["descending"] = bool(d.int(0, 1))
    if d.chance(40):
        kwargs["stable"] = bool(d.int(0, 1))
    return Call("sort", (tensor(d, shp, dtype(d, REALS)),), kwargs)


def _argsort(d: Draw) -> Call:
    call = _sort(d)
    return Call("argsort", call.args, call.kwargs)


def _argsort_canon(call: Call, inputs: list[np.ndarray], result: Any) -> Any:
    if call.kwargs.get("stable") or not isinstance(result, np.ndarray) or inputs[0].ndim == 0:
        return result
    try:
        return np.take_along_axis(inputs[0], result.astype(np.int64), axis=call.kwargs["dim"])
    except (IndexError, ValueError) as exc:
        return f"invalid indices: {exc}"


def _sort_canon(call: Call, inputs: list[np.ndarray], result: Any) -> Any:
    if call.kwargs.get("stable"):
        return result
    return take_indices(dim_arg=None)(call, inputs, result)


def _topk(d: Draw) -> Call:
    shp = shape(d)
    at = dim(d, len(shp))
    size = shp[at] if -len(shp) <= at < len(shp) else 1
    kwargs: dict[str, Any] = {"dim": at}
    if d.chance(40):
        kwargs["largest"] = bool(d.int(0, 1))
    if d.chance(30):
        kwargs["sorted"] = bool(d.int(0, 1))
    k = d.int(0, size) if not d.chance(5) else size + 1
    return Call("topk", (tensor(d, shp, dtype(d, REALS)), k), kwargs)


def _topk_canon(call: Call, inputs: list[np.ndarray], result: Any) -> Any:
    values, picked = take_indices(dim_arg=None)(call, inputs, result)
    if call.kwargs.get("sorted", True) or not isinstance(picked, np.ndarray) or values.ndim == 0:
        return values, picked
    axis = call.kwargs["dim"]
    return np.sort(values, axis=axis), np.sort(picked, axis=axis)  # sorted=False leaves the order unspecified


def _kthvalue(d: Draw) -> Call:
    shp = shape(d)
    at = dim(d, len(shp))
    size = shp[at] if -len(shp) <= at < len(shp) else 1
    k = d.int(1, max(size, 1)) if not d.chance(5) else d.pick((0, size + 1))
    kwargs = {"keepdim": bool(d.int(0, 1))} if d.chance(40) else {}
    return Call("kthvalue", (tensor(d, shp, dtype(d, REALS)), k, at), kwargs)


def _kthvalue_canon(call: Call, inputs: list[np.ndarray], result: Any) -> Any:
    values, indices = result[0], result[1]
    x = inputs[0]
    if not isinstance(indices, np.ndarray) or x.ndim == 0:
        return values, indices
    axis = call.args[2] % x.ndim
    keep = indices if indices.ndim == x.ndim else np.expand_dims(indices, axis)
    try:
        picked = np.take_along_axis(x, keep.astype(np.int64), axis=axis)
    except (IndexError, ValueError) as exc:
        return values, f"invalid indices: {exc}"
    return values, picked.reshape(indices.shape)


# ---- products and casts ---------------------------------------------------------------------------------------------
def _matmul(d: Draw) -> Call:
    dt = dtype(d, NUMERIC)
    n, k, m = d.int(0 if d.chance(10) else 1, 4), d.int(0 if d.chance(10) else 1, 4), d.int(0 if d.chance(10) else 1, 4)
    batch = shape(d, max_dims=2, max_side=3)
    a_shape: tuple[int, ...] = d.pick(((k,), (n, k), batch + (n, k)))
    b_batch = batch[d.int(0, len(batch)):] if d.chance(70) else tuple(1 for _ in batch)
    b_shape: tuple[int, ...] = d.pick(((k,), (k, m), b_batch + (k, m)))
    if d.chance(5):
        b_shape = b_shape[:-2] + (k + 1,) + b_shape[-1:] if len(b_shape) >= 2 else (k + 1,)
    return Call("matmul", (tensor(d, a_shape, dt), tensor(d, b_shape, dt if d.chance(90) else d.pick(NUMERIC))))


def _mm(name: str, batched: bool) -> FuzzOp:
    def gen(d: Draw) -> Call:
        dt = dtype(d, NUMERIC)
        n, k, m = (d.int(0 if d.chance(10) else 1, 4) for _ in range(3))
        b = (d.int(0 if d.chance(10) else 1, 3),) if batched else ()
        k2 = k if not d.chance(5) else k + 1
        return Call(name, (tensor(d, b + (n, k), dt), tensor(d, b + (k2, m), dt if d.chance(90) else d.pick(NUMERIC))))

    return FuzzOp(name, gen, tol="reduce", grad=True)


def _to(d: Draw) -> Call:
    src, target = dtype(d, ALL, any_percent=0), d.pick(ALL)
    # a non-finite or out-of-range float converted to an integer is undefined in C++: small finite values
    exact = target in INTS and (src in FLOATS or src in COMPLEX)
    x = tensor(d, shape(d), src, special=not exact, **({"low": -4, "high": 4} if exact else {}))
    return Call("Tensor.to", (x, DtypeArg(target)))


OPS = [
    _fill("zeros"),
    _fill("ones"),
    FuzzOp("empty", lambda d: Call("empty", (_size(d),), _dtype_kw(d)), canon=_empty_canon, factory=True),
    FuzzOp("full", _full, tol="exact", factory=True),
    FuzzOp("arange", _arange, factory=True),
    FuzzOp("linspace", _linspace, factory=True),
    FuzzOp("eye", _eye, tol="exact", factory=True),
    FuzzOp("tensor", _tensor, tol="exact", factory=True),
    _like("zeros_like"),
    _like("full_like"),
    FuzzOp("sort", _sort, canon=_sort_canon, grad=True),
    FuzzOp("argsort", _argsort, canon=_argsort_canon),
    FuzzOp("topk", _topk, canon=_topk_canon, grad=True),
    FuzzOp("kthvalue", _kthvalue, canon=_kthvalue_canon, grad=True),
    FuzzOp("matmul", _matmul, tol="reduce", grad=True),
    _mm("mm", False),
    _mm("bmm", True),
    FuzzOp("Tensor.to", _to, fn="Tensor.to"),
]
