"""Fuzzed shape and view ops: reshape/view, permute/transpose, squeeze/unsqueeze, flatten, expand,
cat/stack, split/chunk/narrow/select/unbind, flip/roll/repeat/movedim, tril/triu, diagonal."""

from __future__ import annotations

from typing import Any

from torchplug.testing.fuzz._table import FuzzOp
from torchplug.testing.fuzz.ops._common import ALL, Call, Draw, dim, dims, dtype, shape, tensor

__all__ = ["OPS"]


def _x(d: Draw, **kw: Any) -> tuple[Any, tuple[int, ...]]:
    shp = shape(d, **kw)
    return tensor(d, shp, dtype(d, ALL, any_percent=0)), shp


def _numel(shp: tuple[int, ...]) -> int:
    n = 1
    for s in shp:
        n *= s
    return n


def _target_shape(d: Draw, numel: int, invalid: int = 8) -> tuple[int, ...]:
    """A shape with ``numel`` elements, sometimes with one -1 (sometimes one that does not fit)."""
    if d.chance(invalid):
        out = list(shape(d, max_dims=3))
        if d.chance(30):
            out.append(-1)
            out.append(-1)
        return tuple(out)
    if numel == 0:
        out = list(shape(d, 1, 3, empty=0))
        out[d.int(0, len(out) - 1)] = 0
        if d.chance(30):
            out[d.int(0, len(out) - 1)] = -1
        return tuple(out)
    if numel == 1 and d.chance(30):
        return ()
    out, rest = [], numel
    for _ in range(d.int(0, 3)):
        f = d.pick([k for k in range(1, rest + 1) if rest % k == 0])
        out.append(f)
        rest //= f
    out.insert(d.int(0, len(out)), rest)
    if d.chance(40):
        out[d.int(0, len(out) - 1)] = -1
    return tuple(out)


def _reshape(name: str) -> FuzzOp:
    def gen(d: Draw) -> Call:
        x, shp = _x(d)
        return Call(name, (x, _target_shape(d, _numel(shp))))

    return FuzzOp(name, gen, fn="reshape" if name == "reshape" else "Tensor.view", grad=True)


def _permute(d: Draw) -> Call:
    x, shp = _x(d)
    order = list(range(len(shp)))
    for i in range(len(order) - 1, 0, -1):
        j = d.int(0, i)
        order[i], order[j] = order[j], order[i]
    if d.chance(8):
        order = order[:-1] if order and d.chance(50) else order + [0]
    elif order and d.chance(30):
        order[0] -= len(shp)
    return Call("permute", (x, tuple(order)))


def _transpose(d: Draw) -> Call:
    x, shp = _x(d)
    return Call("transpose", (x, dim(d, len(shp)), dim(d, len(shp))))


def _t(d: Draw) -> Call:
    x, _ = _x(d, max_dims=3)
    return Call("t", (x,))


def _squeeze(d: Draw) -> Call:
    x, shp = _x(d)
    if len(shp) and d.chance(40):
        shp = tuple(1 if d.chance(40) else s for s in shp)
        x = tensor(d, shp, x.dtype)
    mode = d.int(0, 2)
    if mode == 0:
        return Call("squeeze", (x,))
    if mode == 1:
        return Call("squeeze", (x, dim(d, len(shp))))
    return Call("squeeze", (x, dims(d, len(shp))))


def _unsqueeze(d: Draw) -> Call:
    x, shp = _x(d)
    return Call("unsqueeze", (x, dim(d, len(shp) + 1)))


def _flatten(d: Draw) -> Call:
    x, shp = _x(d)
    kwargs: dict[str, Any] = {}
    if d.chance(70):
        kwargs["start_dim"] = dim(d, len(shp))
    if d.chance(70):
        kwargs["end_dim"] = dim(d, len(shp))
    return Call("flatten", (x,), kwargs)


def _expand(d: Draw) -> Call:
    x, shp = _x(d)
    if shp and d.chance(50):
        shp = tuple(1 if d.chance(50) else s for s in shp)
        x = tensor(d, shp, x.dtype)
    sizes = [d.int(0, 3) if s == 1 and d.chance(60) else (-1 if d.chance(20) else s) for s in shp]
    sizes = [d.int(1, 3) for _ in range(d.int(0, 2))] + sizes
    if d.chance(6) and sizes:
        sizes[d.int(0, len(sizes) - 1)] = d.pick((5, -2))
    return Call("Tensor.expand", (x, tuple(sizes)))


def _parts(d: Draw, count: int, same: bool) -> tuple[list[Any], int]:
    """``count`` tensors that may be joined along a drawn dim (sometimes ones that may not)."""
    shp = shape(d, 1 if not same else 0, 4)
    ndim = len(shp)
    at = dim(d, ndim + 1 if same else ndim)
    dt = dtype(d, ALL, any_percent=0)
    out = []
    for _ in range(count):
        s = list(shp)
        if not same and s:
            s[at % ndim if -ndim <= at < ndim else 0] = d.int(0, 3)
        if d.chance(5) and s:
            s[d.int(0, len(s) - 1)] += 1
        if not same and d.chance(5):
            s = [0]  # the legacy empty 1-d tensor cat skips
        out.append(tensor(d, tuple(s), dt if d.chance(75) else d.pick(ALL)))
    return out, at


def _cat(d: Draw) -> Call:
    parts, at = _parts(d, d.int(0 if d.chance(3) else 1, 3), same=False)
    return Call("cat", (parts,), {"dim": at} if d.chance(80) else {})


def _stack(d: Draw) -> Call:
    parts, at = _parts(d, d.int(1, 3), same=True)
    return Call("stack", (parts, at))


def _split(d: Draw) -> Call:
    x, shp = _x(d, min_dims=1)
    at = dim(d, len(shp))
    size = shp[at] if -len(shp) <= at < len(shp) else 3
    if d.chance(50):
        how: Any = d.int(0 if d.chance(5) else 1, 4)
    else:
        parts = []
        left = size
        while left > 0 and len(parts) < 4:
            parts.append(d.int(0, left))
            left -= parts[-1]
        if left:
            parts.append(left)
        if d.chance(8):
            parts.append(1)
        how = parts
    return Call("split", (x, how, at))


def _chunk(d: Draw) -> Call:
    x, shp = _x(d, min_dims=1)
    return Call("chunk", (x, d.int(0 if d.chance(5) else 1, 5), dim(d, len(shp))))


def _narrow(d: Draw) -> Call:
    x, shp = _x(d, min_dims=1)
    at = dim(d, len(shp))
    size = shp[at] if -len(shp) <= at < len(shp) else 2
    start = d.int(-size, size) if size else 0
    length = d.int(0, max(size - (start % size if size else 0), 0) + (1 if d.chance(8) else 0))
    return Call("narrow", (x, at, start, length))


def _select(d: Draw) -> Call:
    x, shp = _x(d, min_dims=1)
    at = dim(d, len(shp))
    size = shp[at] if -len(shp) <= at < len(shp) else 2
    return Call("select", (x, at, d.int(-size - 1, size)))


def _unbind(d: Draw) -> Call:
    x, shp = _x(d, min_dims=1)
    return Call("unbind", (x, dim(d, len(shp))))


def _flip(d: Draw) -> Call:
    x, shp = _x(d)
    return Call("flip", (x, dims(d, len(shp))))


def _roll(d: Draw) -> Call:
    x, shp = _x(d)
    if d.chance(30):
        return Call("roll", (x, d.int(-5, 5)))
    at = dims(d, len(shp))
    shifts = tuple(d.int(-5, 5) for _ in at)
    if d.chance(5):
        shifts = shifts + (1,)
    return Call("roll", (x, shifts if len(shifts) != 1 or d.chance(50) else shifts[0], at))


def _repeat(d: Draw) -> Call:
    x, shp = _x(d, max_dims=3)
    extra = d.int(-1 if d.chance(8) else 0, 2)
    sizes = tuple(d.int(0 if d.chance(10) else 1, 3) for _ in range(max(len(shp) + extra, 0)))
    return Call("Tensor.repeat", (x, sizes))


def _movedim(d: Draw) -> Call:
    x, shp = _x(d)
    if d.chance(50):
        return Call("movedim", (x, dim(d, len(shp)), dim(d, len(shp))))
    src = dims(d, len(shp))
    dst = dims(d, len(shp), invalid=0)[: len(src)]
    if len(dst) < len(src) and not d.chance(10):
        src = src[: len(dst)]
    return Call("movedim", (x, src, dst))


def _tri(name: str) -> FuzzOp:
    def gen(d: Draw) -> Call:
        x, _ = _x(d, min_dims=1 if d.chance(90) else 0)
        return Call(name, (x,), {"diagonal": d.int(-3, 3)} if d.chance(50) else {})

    return FuzzOp(name, gen, grad=True)


def _diagonal(d: Draw) -> Call:
    x, shp = _x(d, min_dims=2 if d.chance(90) else 1)
    n = len(shp)
    dim1 = dim(d, n)
    # two different dims mostly (equal dims are an error)
    dim2 = dim(d, n) if d.chance(15) or n < 2 else (dim1 + d.int(1, n - 1)) % n - (n if d.chance(30) else 0)
    return Call("diagonal", (x,), {"offset": d.int(-3, 3), "dim1": dim1, "dim2": dim2})


OPS = [
    _reshape("reshape"),
    _reshape("Tensor.view"),
    FuzzOp("permute", _permute, grad=True),
    FuzzOp("transpose", _transpose, grad=True),
    FuzzOp("t", _t, grad=True),
    FuzzOp("squeeze", _squeeze, grad=True),
    FuzzOp("unsqueeze", _unsqueeze, grad=True),
    FuzzOp("flatten", _flatten, grad=True),
    FuzzOp("Tensor.expand", _expand, grad=True),
    FuzzOp("cat", _cat, grad=True),
    FuzzOp("stack", _stack, grad=True),
    FuzzOp("split", _split, grad=True),
    FuzzOp("chunk", _chunk, grad=True),
    FuzzOp("narrow", _narrow, grad=True),
    FuzzOp("select", _select, grad=True),
    FuzzOp("unbind", _unbind, grad=True),
    FuzzOp("flip", _flip, grad=True),
    FuzzOp("roll", _roll, grad=True),
    FuzzOp("Tensor.repeat", _repeat, grad=True),
    FuzzOp("movedim", _movedim, grad=True),
    _tri("tril"),
    _tri("triu"),
    FuzzOp("diagonal", _diagonal, grad=True),
]
