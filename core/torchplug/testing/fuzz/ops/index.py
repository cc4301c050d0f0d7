"""Fuzzed indexing: ``x[idx]`` and ``x[idx] = v`` with ints, slices, None, Ellipsis, bool and integer
tensors, lists and bool scalars; index_select, gather, scatter/scatter_add, index_add, index_put,
masked_fill, masked_select, take, nonzero."""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug.testing.fuzz._spec import spec_data
from torchplug.testing.fuzz._table import FuzzOp
from torchplug.testing.fuzz.ops._common import ALL, Call, Draw, TensorSpec, dim, dtype, index_source, scalar, shape, tensor

__all__ = ["OPS"]


def _int_index(d: Draw, size: int, count: int, unique: bool, lists: bool = True) -> Any:
    """An integer index tensor (or list) into a dim of ``size``; sometimes out of range or of a bad dtype."""
    low, high = -size, size - 1
    if d.chance(5) or size == 0:
        low, high = size, size + 1  # out of range
    dt = "int64" if d.chance(85) else d.pick(("int32", "int16"))
    shp = (count,) if d.chance(85) else ()
    if unique and size and count <= size:
        low, high = (0, size - 1) if low < high else (low, high)
        spec = tensor(d, shp, dt, low=low, high=high, unique=0 if shp else -1)
    else:
        spec = tensor(d, shp, dt, low=low, high=high)
    if lists and d.chance(15) and shp:
        return [int(v) for v in spec_data(spec).reshape(-1)]
    return spec


def _slice(d: Draw, size: int) -> slice:
    def bound() -> int | None:
        return None if d.chance(30) else d.int(-size - 1, size + 1)

    step = d.pick((None, None, 1, 2, 3)) if not d.chance(3) else d.pick((0, -1))
    return slice(bound(), bound(), step)


def _index(d: Draw, shp: tuple[int, ...], setting: bool) -> Any:
    """A drawn index for a tensor of ``shp`` (one that numpy-style indexing mostly accepts)."""
    ndim = len(shp)
    if d.chance(12):  # a whole boolean mask, possibly of the leading dims only
        lead = d.int(1, ndim) if ndim else 0
        mask_shape = shp[:lead]
        if d.chance(5) and mask_shape:
            mask_shape = mask_shape[:-1] + (mask_shape[-1] + 1,)
        return tensor(d, mask_shape, "bool" if d.chance(90) else "uint8")
    consumed = d.int(0, ndim) if not d.chance(4) else ndim + 1
    with_ellipsis = d.chance(25)
    split = d.int(0, consumed) if with_ellipsis else consumed
    dims_used = list(range(split)) + list(range(ndim - (consumed - split), ndim))
    advanced = d.int(1, 3)  # shared length of integer tensors, so they broadcast together
    comps: list[Any] = []
    for k, at in enumerate(dims_used):
        size = shp[at] if 0 <= at < ndim else 2
        choice = d.int(0, 9)
        if choice <= 2:
            comps.append(d.int(-size, size - 1) if size and not d.chance(4) else size)
        elif choice <= 6:
            comps.append(_slice(d, size))
        elif choice <= 8:
            comps.append(_int_index(d, size, advanced, setting))
        else:
            comps.append(tensor(d, (size,) if not d.chance(4) else (size + 1,), "bool"))
        if with_ellipsis and k == split - 1:
            comps.append(Ellipsis)
    if with_ellipsis and split == 0:
        comps.insert(0, Ellipsis)
    for _ in range(d.int(0, 2) if d.chance(30) else 0):
        comps.insert(d.int(0, len(comps)), None if d.chance(85) else bool(d.int(0, 1)))
    if d.chance(3):
        comps.append(Ellipsis)  # a second ellipsis is an IndexError
    if len(comps) == 1 and d.chance(60):
        return comps[0]
    return tuple(comps)


def _np_index(idx: Any) -> Any:
    if isinstance(idx, TensorSpec):
        return np.broadcast_to(spec_data(idx), idx.shape).astype(bool if idx.dtype == "bool" else np.int64)
    if isinstance(idx, tuple):
        return tuple(_np_index(i) for i in idx)
    if isinstance(idx, list):
        return np.asarray(idx, dtype=np.int64)
    return idx


def _indexed_shape(shp: tuple[int, ...], idx: Any) -> tuple[int, ...] | None:
    """The shape of ``x[idx]`` by NumPy's rules (close to PyTorch's), or None if NumPy refuses."""
    try:
        return tuple(np.empty(shp, dtype=np.int8)[_np_index(idx)].shape)
    except Exception:  # noqa: BLE001 - any refusal: the value's shape is then drawn freely
        return None


def _getitem_fn(module: Any, x: Any, idx: Any) -> Any:
    return x[idx]


def _setitem_fn(module: Any, x: Any, idx: Any, value: Any) -> Any:
    x[idx] = value
    return x


def _masks(idx: Any) -> bool:
    """The index holds a bool or uint8 tensor (a mask: the result's shape depends on its values)."""
    if isinstance(idx, TensorSpec):
        return idx.dtype in ("bool", "uint8")
    return isinstance(idx, tuple) and any(_masks(i) for i in idx)


def _getitem(d: Draw) -> Call:
    shp = shape(d)
    idx = _index(d, shp, False)
    return Call("getitem", (tensor(d, shp, dtype(d, ALL, any_percent=0)), idx), data_dependent=_masks(idx))


def _setitem(d: Draw) -> Call:
    shp = shape(d)
    dt = dtype(d, ALL, any_percent=0)
    idx = _index(d, shp, True)
    target = _indexed_shape(shp, idx)
    choice = d.int(0, 9)
    if choice < 4:
        value: Any = scalar(d, "any")
    else:
        vshape = target if target is not None else shape(d, max_dims=2)
        if choice < 6:
            vshape = ()
        elif d.chance(40) and vshape:
            vshape = tuple(1 if d.chance(40) else s for s in vshape[d.int(0, len(vshape)):])
        if d.chance(4):
            vshape = vshape + (2,)
        value = tensor(d, vshape, dt if d.chance(70) else d.pick(ALL))
    return Call("setitem", (tensor(d, shp, dt), idx, value), data_dependent=_masks(idx))


def _index_select(d: Draw) -> Call:
    shp = shape(d)
    at = dim(d, len(shp))
    size = shp[at] if -len(shp) <= at < len(shp) else (1 if not shp else 2)
    high = size - 1 if not d.chance(6) else size
    low = 0 if not d.chance(4) else -1
    idx = tensor(d, (d.int(0, 4),) if d.chance(85) else (), "int64" if d.chance(85) else d.pick(("int32", "float32")),
                 low=low, high=max(high, low))
    return Call("index_select", (tensor(d, shp, dtype(d, ALL, any_percent=0)), at, idx))


def _gather_like(d: Draw, unique: bool) -> tuple[Any, int, Any, tuple[int, ...], tuple[int, ...]]:
    shp = shape(d, max_dims=3)
    ndim = len(shp)
    at = dim(d, ndim)
    norm = at % max(ndim, 1) if -max(ndim, 1) <= at < max(ndim, 1) else 0
    ishape = [d.int(0, s) for s in shp]
    if ndim and not unique:
        ishape[norm] = d.int(0, shp[norm] + 2)
    if d.chance(5):
        ishape = ishape + [1] if d.chance(50) else ishape[:-1]
    size = shp[norm] if ndim else 1
    high = size - 1 if not d.chance(5) else size
    idx = tensor(d, tuple(ishape), "int64" if d.chance(92) else "int32", low=0, high=max(high, 0),
                 unique=norm if unique and len(ishape) == ndim and ndim else -1)
    x = tensor(d, shp, dtype(d, ALL, any_percent=0))
    return x, at, idx, shp, tuple(ishape)


def _gather(d: Draw) -> Call:
    x, at, idx, _, _ = _gather_like(d, False)
    return Call("gather", (x, at, idx))


def _scatter(d: Draw) -> Call:
    x, at, idx, shp, ishape = _gather_like(d, True)
    if d.chance(35):
        return Call("scatter", (x, at, idx), {"value": scalar(d, "any")})
    src_shape = tuple(max(i, s) for i, s in zip(ishape, shp)) if d.chance(50) else ishape
    src = tensor(d, src_shape, x.dtype if d.chance(85) else d.pick(ALL))
    kwargs = {"reduce": d.pick(("add", "multiply"))} if d.chance(15) else {}
    return Call("scatter", (x, at, idx, src), kwargs)


def _scatter_add(d: Draw) -> Call:
    x, at, idx, shp, ishape = _gather_like(d, False)
    return Call("scatter_add", (x, at, idx, tensor(d, ishape, x.dtype if d.chance(90) else d.pick(ALL))))


def _index_add(d: Draw) -> Call:
    shp = shape(d, min_dims=0 if d.chance(10) else 1)
    at = dim(d, len(shp))
    norm = at % max(len(shp), 1) if -max(len(shp), 1) <= at < max(len(shp), 1) else 0
    count = d.int(0, 4)
    size = shp[norm] if shp else 1
    dt_index = "int64" if d.chance(90) else "int32"
    high = size - 1 if not d.chance(5) else size  # sometimes one past the end
    idx = tensor(d, (count,), dt_index, low=0, high=max(high, 0))
    src_shape = list(shp) if shp else []
    if src_shape:
        src_shape[norm] = count if not d.chance(5) else count + 1
    dt = dtype(d, ALL, any_percent=0)
    kwargs = {"alpha": scalar(d, "int")} if d.chance(25) else {}
    return Call("index_add", (tensor(d, shp, dt), at, idx, tensor(d, tuple(src_shape), dt)), kwargs)


def _index_put(d: Draw) -> Call:
    shp = shape(d, min_dims=1)
    count = d.int(0, 4)
    k = d.int(1, len(shp))
    accumulate = d.chance(50)
    indices = tuple(_int_index(d, shp[i], count, not accumulate, lists=False) for i in range(k))
    dt = dtype(d, ALL, any_percent=0)
    vshape = (count,) + shp[k:] if d.chance(70) else ()
    return Call("Tensor.index_put", (tensor(d, shp, dt), indices, tensor(d, vshape, dt)), {"accumulate": accumulate})


def _masked_fill(d: Draw) -> Call:
    shp = shape(d)
    mshape = tuple(1 if d.chance(30) else s for s in shp[d.int(0, len(shp)):])
    if d.chance(5):
        mshape = (2,) + shp
    mask = tensor(d, mshape, "bool" if d.chance(92) else "uint8")
    dt = dtype(d, ALL, any_percent=0)
    value: Any = scalar(d, "any") if d.chance(70) else tensor(d, () if d.chance(85) else (2,), d.pick(ALL))
    return Call("masked_fill", (tensor(d, shp, dt), mask, value))


def _masked_select(d: Draw) -> Call:
    a, b = shape(d), shape(d)
    shp = shape(d)
    mshape = tuple(1 if d.chance(30) else s for s in shp[d.int(0, len(shp)):]) if d.chance(85) else b
    return Call("masked_select", (tensor(d, shp if d.chance(85) else a, dtype(d, ALL, any_percent=0)),
                                  tensor(d, mshape, "bool" if d.chance(92) else "uint8")))


def _take(d: Draw) -> Call:
    shp = shape(d)
    n = 1
    for s in shp:
        n *= s
    low, high = (-n, n - 1) if n and not d.chance(5) else (n, n + 1)
    return Call("take", (tensor(d, shp, dtype(d, ALL, any_percent=0)), tensor(d, shape(d, max_dims=2), "int64",
                                                                         low=low, high=high)))


def _nonzero(d: Draw) -> Call:
    x = tensor(d, shape(d), dtype(d, ALL, any_percent=0))
    return Call("nonzero", (x,), {"as_tuple": True} if d.chance(30) else {})


def _setitem_expr(args: list[str], kwargs: dict[str, str]) -> str:
    return f"x = {args[0]}\nx[{index_source(args[1])}] = {args[2]}\nx"


OPS = [
    FuzzOp("getitem", _getitem, fn=_getitem_fn, expr=lambda a, k: f"{a[0]}[{index_source(a[1])}]", grad=True),
    FuzzOp("setitem", _setitem, fn=_setitem_fn, expr=_setitem_expr),
    FuzzOp("index_select", _index_select, grad=True),
    FuzzOp("gather", _gather, grad=True),
    FuzzOp("scatter", _scatter, grad=True),
    FuzzOp("scatter_add", _scatter_add, tol="reduce", grad=True),
    FuzzOp("index_add", _index_add, tol="reduce", grad=True),
    FuzzOp("Tensor.index_put", _index_put, tol="reduce", grad=True),
    FuzzOp("masked_fill", _masked_fill, grad=True),
    FuzzOp("masked_select", _masked_select, data_dependent=True, grad=True),
    FuzzOp("take", _take, grad=True),
    FuzzOp("nonzero", _nonzero, data_dependent=True),
]
