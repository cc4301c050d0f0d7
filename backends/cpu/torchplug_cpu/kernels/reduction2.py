"""cpu kernels: reductions beyond the foundation (logsumexp, vector norm, nansum), scans, sorting and
selection, order statistics, quantiles, unique, bincount and histc.

Sorting follows PyTorch: NaN sorts as the largest value, and sorts are stable (so ties keep
their input order, and descending sorts keep it too).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug.library import KernelTable

from .. import _common as C
from .._common import COMPLEX, F32, FLOATING, HALF, INTEGRAL, Tensor, loud, not_implemented, quiet, wrap
from .pointwise import _lerp
from .reduction import _acc, _accumulating, _axes, _finish

TABLE = KernelTable("CPU")

_BOOL = D.bool_
_INTLIKE = INTEGRAL | {_BOOL}
_NP_I64 = np.dtype(np.int64)


def _num(x: float) -> str:
    """A Scalar as PyTorch prints it in messages (``-1``, ``inf``, ``2.5``)."""
    return str(int(x)) if float(x).is_integer() else str(x)


def _isnan(x: np.ndarray) -> np.ndarray:
    return np.isnan(x) if x.dtype.kind in "fcV" else np.zeros(x.shape, bool)  # ("V": ml_dtypes' bfloat16)


# ---- logsumexp / vector norm / nansum -----------------------------------------------------------------
@TABLE.impl("aten::logsumexp")
def logsumexp(self: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    dt = D.get_default_dtype() if self._dtype in _INTLIKE else self._dtype
    x = self._data.astype(_acc(dt))
    axes = _axes(x, dim)
    tok = quiet()
    try:
        if x.size == 0:
            r = np.log(np.add.reduce(np.exp(x), axis=axes, keepdims=keepdim))
        else:
            # PyTorch: subtract the max of the real parts (infinite maxima replaced by 0)
            m = np.maximum.reduce(x.real, axis=axes, keepdims=True)
            m = np.where(np.isinf(m), np.zeros((), m.dtype), m)
            r = np.log(np.add.reduce(np.exp(x - m), axis=axes, keepdims=True)) + m
            if not keepdim:
                r = r.reshape([s for i, s in enumerate(r.shape) if i not in axes])
    finally:
        loud(tok)
    return _finish(r, dt)


@TABLE.impl("aten::linalg_vector_norm")
def vector_norm(self: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, dtype: D.dtype | None = None) -> Tensor:
    dt = self._dtype
    if dt not in FLOATING and dt not in COMPLEX:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {C.torch_name(dt)}")
    if dtype is not None:
        if dtype not in FLOATING and dtype not in COMPLEX:
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got {C.torch_name(dtype)}")
        if (dt in COMPLEX) != (dtype in COMPLEX):
            kind = "complex" if dt in COMPLEX else "real"
            raise RuntimeError(f"linalg.vector_norm: dtype should be {kind} for {kind} inputs, but got {C.torch_name(dtype)}")
        dt = dtype
    x = self._data
    axes = _axes(x, dim)
    p = float(ord.real if isinstance(ord, complex) else ord)
    if (p < 0 or p == math.inf) and x.size == 0:
        shown = _num(p) if math.isfinite(p) else ("inf" if p > 0 else "-inf")
        if dim is None or len(dim) == 0:
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {shown} norm on an empty tensor because the operation does "
                "not have an identity"
            )
        for a in axes:
            if x.shape[a] == 0:  # (sic: PyTorch's message has no space after the dim)
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the {shown} norm on the dimension {a}because this dimension "
                    "is empty and the operation does not have an identity"
                )
    tok = quiet()
    try:
        a = np.abs(x.astype(_acc(dt)))
        if p == 2:
            r = np.sqrt(np.add.reduce(a * a, axis=axes, keepdims=keepdim))
        elif p == math.inf:
            r = np.maximum.reduce(a, axis=axes, keepdims=keepdim)
        elif p == -math.inf:
            r = np.minimum.reduce(a, axis=axes, keepdims=keepdim)
        elif p == 0:
            r = np.add.reduce((a != 0).astype(a.dtype), axis=axes, keepdims=keepdim)
        elif p == 1:
            r = np.add.reduce(a, axis=axes, keepdims=keepdim)
        else:
            r = np.power(np.add.reduce(np.power(a, np.asarray(p, a.dtype)), axis=axes, keepdims=keepdim),
                         np.asarray(1 / p, a.dtype))
    finally:
        loud(tok)
    return _finish(r, dt.to_real())


@TABLE.impl("aten::nansum")
def nansum(self: Tensor, dim: Any = None, keepdim: bool = False, dtype: D.dtype | None = None) -> Tensor:
    if self._dtype in COMPLEX:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    x, dt = _accumulating(self, dtype)
    tok = quiet()
    try:
        if x.dtype.kind == "f" or self._dtype in HALF:
            x = np.where(np.isnan(x), np.zeros((), x.dtype), x)
        r = np.add.reduce(x, axis=_axes(x, dim), dtype=_acc(dt), keepdims=keepdim)
    finally:
        loud(tok)
    return _finish(r, dt)


# ---- scans -----------------------------------------------------------------------------------------------
_SCAN_DTYPES = INTEGRAL | FLOATING | COMPLEX  # the result dtypes torch's cumsum/cumprod cpu kernels compute


def _cumulative(name: str, ufunc: Any) -> Any:
    def kernel(self: Tensor, dim: int, dtype: D.dtype | None = None) -> Tensor:
        if self._dtype in COMPLEX and dtype is not None and dtype not in COMPLEX:
            self = wrap(self._data.real)  # a complex -> real cast drops the imaginary part
        x, dt = _accumulating(self, dtype)
        d = C.wrap_dim(dim, x.ndim)
        if dt not in _SCAN_DTYPES and x.ndim and x.size:  # (a 0-dim or empty input is copied, in any dtype)
            raise not_implemented(f"{name}_out_cpu", dt)
        tok = quiet()
        try:
            r = x.astype(_acc(dt)) if x.ndim == 0 else ufunc.accumulate(x, axis=d, dtype=_acc(dt))
        finally:
            loud(tok)
        return _finish(r, dt)

    return kernel


TABLE.impl("aten::cumsum")(_cumulative("cumsum", np.add))
TABLE.impl("aten::cumprod")(_cumulative("cumprod", np.multiply))


def _positions(shape: tuple[int, ...], d: int) -> np.ndarray:
    """0, 1, 2... along axis ``d``, broadcastable against an array of ``shape``."""
    return np.arange(shape[d], dtype=_NP_I64).reshape([-1 if i == d else 1 for i in range(len(shape))])


def _cum_extreme(name: str, ufunc: Any) -> Any:
    def kernel(self: Tensor, dim: int) -> tuple[Tensor, Tensor]:
        x = self._data
        d = C.wrap_dim(dim, x.ndim)
        if x.ndim == 0 or x.size == 0:
            return wrap(x.copy()), wrap(np.zeros(x.shape, _NP_I64))
        if self._dtype in COMPLEX:
            raise not_implemented(f"{name}_cpu", self._dtype)
        tok = quiet()
        try:
            values = ufunc.accumulate(x, axis=d)  # NaN propagates, as in PyTorch
            # PyTorch moves the index on ties (x >= running max) and on every NaN once the run is NaN
            hit = (x == values) | (_isnan(x) & _isnan(values))
        finally:
            loud(tok)
        idx = np.maximum.accumulate(np.where(hit, _positions(x.shape, d), 0), axis=d)
        return wrap(values), wrap(idx)

    return kernel


TABLE.impl("aten::cummax")(_cum_extreme("cummax", np.maximum))
TABLE.impl("aten::cummin")(_cum_extreme("cummin", np.minimum))


# ---- sorting and selection ------------------------------------------------------------------------------
def _key(x: np.ndarray) -> np.ndarray:
    """Sort key: half types as float32 (exact), so NumPy's NaN-last ordering applies."""
    return x.astype(F32) if x.dtype.kind == "V" or x.dtype == np.float16 else x


def _argsort(x: np.ndarray, d: int, descending: bool) -> np.ndarray:
    """Stable argsort along ``d``; descending keeps equal elements in input order (NaN first)."""
    key = _key(x)
    if not descending:
        return np.argsort(key, axis=d, kind="stable")
    flipped = np.argsort(np.flip(key, d), axis=d, kind="stable")
    return (x.shape[d] - 1) - np.flip(flipped, d)


def _no_complex(name: str, dt: D.dtype) -> None:
    if dt in COMPLEX:
        raise RuntimeError(f" {name} does not support complex dtypes on CPU")


@TABLE.impl("aten::sort")
def sort(self: Tensor, dim: int = -1, descending: bool = False, stable: bool | None = False) -> tuple[Tensor, Tensor]:
    x = self._data
    d = C.wrap_dim(dim, x.ndim)  # (the dim is checked before the dtype, as in PyTorch)
    _no_complex("Sort", self._dtype)
    if x.ndim == 0:
        return wrap(x.copy()), wrap(np.zeros((), _NP_I64))
    idx = _argsort(x, d, descending)
    return wrap(np.take_along_axis(x, idx, d)), wrap(idx.astype(_NP_I64, copy=False))


@TABLE.impl("aten::topk")
def topk(self: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> tuple[Tensor, Tensor]:
    x = self._data
    d = C.wrap_dim(dim, x.ndim)
    if not 0 <= k <= (x.shape[d] if x.ndim else 1):
        raise RuntimeError("selected index k out of range")
    _no_complex("topk", self._dtype)
    if self._dtype is D.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if x.ndim == 0:
        return wrap(x.copy()), wrap(np.zeros((), _NP_I64))
    idx = np.take(_argsort(x, d, largest), np.arange(k), axis=d)
    return wrap(np.take_along_axis(x, idx, d)), wrap(idx.astype(_NP_I64, copy=False))


def _select(x: np.ndarray, d: int, rank: np.ndarray, keepdim: bool) -> tuple[Tensor, Tensor]:
    """The element of sorted rank ``rank`` (keepdim-shaped int array) along ``d``, and its index."""
    idx = np.take_along_axis(_argsort(x, d, False), rank, d)
    values = np.take_along_axis(x, idx, d)
    if not keepdim:
        idx, values = idx.squeeze(d), values.squeeze(d)
    return wrap(values), wrap(idx.astype(_NP_I64, copy=False))


def _check_dim_nonempty(name: str, x: np.ndarray, d: int) -> None:
    if x.ndim and x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


@TABLE.impl("aten::kthvalue")
def kthvalue(self: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    x = self._data
    d = C.wrap_dim(dim, x.ndim)
    _check_dim_nonempty("kthvalue", x, d)
    if not 1 <= k <= (x.shape[d] if x.ndim else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if x.ndim == 0:
        return wrap(x.copy()), wrap(np.zeros((), _NP_I64))
    if self._dtype in COMPLEX or self._dtype is D.bool_:
        raise not_implemented("kthvalue_cpu", self._dtype)
    shape = list(x.shape)
    shape[d] = 1
    return _select(x, d, np.full(shape, k - 1, _NP_I64), keepdim)


def _median_rank(x: np.ndarray, d: int, ignore_nan: bool) -> np.ndarray:
    """Sorted rank of the (lower) median along ``d``: the first NaN when NaN propagates."""
    n = x.shape[d]
    valid = np.add.reduce(~_isnan(x), axis=d, keepdims=True).astype(_NP_I64)
    if ignore_nan:
        return np.maximum((valid - 1) // 2, 0)
    return np.where(valid < n, valid, (n - 1) // 2)


def _median_all(name: str, ignore_nan: bool) -> Any:
    def kernel(self: Tensor) -> Tensor:
        if self._dtype in COMPLEX or self._dtype is D.bool_:
            raise not_implemented("median_cpu", self._dtype)
        x = self._data.reshape(-1)
        if x.size == 0:
            return wrap(np.full((), np.nan, x.dtype))
        return _select(x, 0, _median_rank(x, 0, ignore_nan), False)[0]

    return kernel


def _median_dim(name: str, ignore_nan: bool) -> Any:
    def kernel(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        if self._dtype in COMPLEX or self._dtype is D.bool_:
            raise not_implemented("median_out", self._dtype)
        x = self._data
        d = C.wrap_dim(dim, x.ndim)
        _check_dim_nonempty("median", x, d)  # (nanmedian's message says median() too)
        if x.ndim == 0:
            return wrap(x.copy()), wrap(np.zeros((), _NP_I64))
        if x.size == 0:
            shape = [1 if i == d else s for i, s in enumerate(x.shape)] if keepdim else [s for i, s in enumerate(x.shape) if i != d]
            return wrap(np.empty(shape, x.dtype)), wrap(np.empty(shape, _NP_I64))
        return _select(x, d, _median_rank(x, d, ignore_nan), keepdim)

    return kernel


for _name, _ignore in (("median", False), ("nanmedian", True)):
    TABLE.impl(f"aten::{_name}")(_median_all(_name, _ignore))
    TABLE.impl(f"aten::{_name}.dim")(_median_dim(_name, _ignore))


@TABLE.impl("aten::mode")
def mode(self: Tensor, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    x = self._data
    d = C.wrap_dim(dim, x.ndim)
    _check_dim_nonempty("mode", x, d)
    if x.ndim == 0:
        return wrap(x.copy()), wrap(np.zeros((), _NP_I64))
    if self._dtype in COMPLEX and x.size:
        raise not_implemented("mode_cpu", self._dtype)
    rows = np.moveaxis(x, d, -1)
    out_shape = rows.shape[:-1]
    flat = rows.reshape(-1, rows.shape[-1])
    values = np.empty(flat.shape[0], x.dtype)
    indices = np.empty(flat.shape[0], _NP_I64)
    n = flat.shape[1]
    for i, row in enumerate(flat):  # per row: the most frequent value (smallest on ties), its last index
        uniq, counts = np.unique(_key(row), return_counts=True)
        best = uniq[np.argmax(counts)]
        last = n - 1 - int(np.argmax(_key(row)[::-1] == best))
        values[i], indices[i] = row[last], last
    values, indices = values.reshape(out_shape), indices.reshape(out_shape)
    if keepdim:
        values, indices = np.expand_dims(values, d), np.expand_dims(indices, d)
    return wrap(values), wrap(indices)


# ---- quantiles ---------------------------------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(ignore_nan: bool) -> Any:
    name = "quantile"  # (PyTorch's messages say quantile() for nanquantile too)

    def kernel(self: Tensor, q: Tensor, dim: int | None = None, keepdim: bool = False, interpolation: str = "linear") -> Tensor:
        if interpolation not in _INTERPOLATIONS:
            raise RuntimeError(
                f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, but got "
                f"{interpolation}"
            )
        x = self._data
        if x.size == 0:
            raise RuntimeError(f"{name}() input tensor must be non-empty")
        if q._data.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if self._dtype not in (D.float32, D.float64):
            raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
        if q._dtype is not self._dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        qv = q._data
        if not np.all((qv >= 0) & (qv <= 1)):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        ndim = x.ndim
        if dim is None:
            rows = x.reshape(-1)
            kept = [1] * ndim
        else:
            d = C.wrap_dim(dim, ndim)
            rows = np.moveaxis(x.reshape(x.shape or (1,)), d if ndim else 0, -1)
            kept = [1 if i == d else s for i, s in enumerate(x.shape)]
        tok = quiet()
        try:
            rows = np.sort(rows, axis=-1)  # NaN last
            n = rows.shape[-1]
            nan = np.isnan(rows)
            qb = qv.reshape(qv.shape + (1,) * (rows.ndim - 1))
            if ignore_nan:
                ranks = qb * (np.add.reduce(~nan, axis=-1).astype(x.dtype) - 1)
                ranks = np.where(ranks < 0, np.zeros((), x.dtype), ranks)
            else:
                ranks = np.where(np.logical_or.reduce(nan, axis=-1), np.asarray(n - 1, x.dtype), qb * np.asarray(n - 1, x.dtype))
            if interpolation == "lower":
                ranks = np.floor(ranks)
            elif interpolation == "higher":
                ranks = np.ceil(ranks)
            elif interpolation == "nearest":
                ranks = np.round(ranks)  # half to even, like torch.round
            sorted_b = np.broadcast_to(rows, ranks.shape + (n,))
            below = np.take_along_axis(sorted_b, ranks.astype(_NP_I64)[..., None], -1)[..., 0]
            if interpolation in ("linear", "midpoint"):
                weights = np.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - np.trunc(ranks)
                above = np.take_along_axis(sorted_b, np.ceil(ranks).astype(_NP_I64)[..., None], -1)[..., 0]
                below = _lerp(below, above, weights)
        finally:
            loud(tok)
        if keepdim:
            below = below.reshape(qv.shape + tuple(kept))
        return wrap(np.asarray(below, dtype=x.dtype))

    return kernel


TABLE.impl("aten::quantile")(_quantile(False))
TABLE.impl("aten::nanquantile")(_quantile(True))


# ---- unique ----------------------------------------------------------------------------------------------
def _empty_i64() -> Tensor:
    return wrap(np.empty(0, _NP_I64))


@TABLE.impl("aten::_unique2")
def unique2(self: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False) -> tuple[Tensor, Tensor, Tensor]:
    if self._dtype in COMPLEX:
        raise not_implemented("unique", self._dtype)
    x = self._data
    key = _key(x).reshape(-1)
    # NaN is never equal to itself: each NaN is its own element, as in PyTorch
    values, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True,
                                               equal_nan=False)
    out = x.reshape(-1)[first]
    return (wrap(out), wrap(inverse.reshape(x.shape).astype(_NP_I64)) if return_inverse else _empty_i64(),
            wrap(counts.astype(_NP_I64)) if return_counts else _empty_i64())


def _groups(rows: np.ndarray, change: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run starts, run lengths and each row's run id, given where consecutive rows differ."""
    n = rows.shape[0]
    starts = np.concatenate(([0], np.flatnonzero(change) + 1)).astype(_NP_I64) if n else np.empty(0, _NP_I64)
    counts = np.diff(np.concatenate((starts, [n]))).astype(_NP_I64)
    ids = np.concatenate(([0], np.cumsum(change))).astype(_NP_I64) if n else np.empty(0, _NP_I64)
    return starts, counts, ids


def _as_rows(x: np.ndarray, d: int) -> np.ndarray:
    moved = np.moveaxis(x, d, 0)
    return _key(moved.reshape(moved.shape[0], -1))


@TABLE.impl("aten::unique_dim")
def unique_dim(self: Tensor, dim: int, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False) -> tuple[Tensor, Tensor, Tensor]:
    x = self._data
    d = C.wrap_dim(dim, x.ndim)
    rows = _as_rows(x, d)
    order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(rows.shape[0])  # column 0 is the primary key
    srt = rows[order]
    change = np.any(srt[1:] != srt[:-1], axis=1) if rows.shape[1] else np.zeros(max(rows.shape[0] - 1, 0), bool)
    starts, counts, ids = _groups(srt, change)
    inverse = np.empty(rows.shape[0], _NP_I64)
    inverse[order] = ids
    return (wrap(np.take(x, order[starts], axis=d)), wrap(inverse) if return_inverse else _empty_i64(),
            wrap(counts) if return_counts else _empty_i64())


@TABLE.impl("aten::unique_consecutive")
def unique_consecutive(self: Tensor, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None) -> tuple[Tensor, Tensor, Tensor]:
    if self._dtype in COMPLEX and dim is None:
        raise not_implemented("unique", self._dtype)
    x = self._data
    if dim is None:
        flat = _key(x).reshape(-1)
        starts, counts, ids = _groups(flat, flat[1:] != flat[:-1])
        values, inverse = x.reshape(-1)[starts], ids.reshape(x.shape)
    else:
        d = C.wrap_dim(dim, x.ndim)
        rows = _as_rows(x, d)
        starts, counts, ids = _groups(rows, np.any(rows[1:] != rows[:-1], axis=1))
        values, inverse = np.take(x, starts, axis=d), ids
    return (wrap(values), wrap(inverse) if return_inverse else _empty_i64(),
            wrap(counts) if return_counts else _empty_i64())


# ---- counting -----------------------------------------------------------------------------------------------
@TABLE.impl("aten::bincount")
def bincount(self: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    if self._dtype not in INTEGRAL:
        raise not_implemented("bincount_cpu", self._dtype)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    x = self._data
    out_dt = np.dtype(np.float32) if weights is not None and weights._dtype is D.float32 else np.dtype(np.float64)
    if x.ndim == 1 and x.size == 0:
        return wrap(np.zeros(minlength, _NP_I64 if weights is None else out_dt))
    if x.ndim != 1 or x.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return wrap(np.bincount(x, minlength=minlength).astype(_NP_I64))
    w = weights._data
    if w.ndim != 1 or w.shape[0] != x.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    return wrap(np.bincount(x, weights=w.astype(np.float64), minlength=minlength).astype(out_dt))


@TABLE.impl("aten::histc")
def histc(self: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:
    dt = self._dtype
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    if dt not in FLOATING:
        raise not_implemented("histogram_cpu", dt)
    npdt = dt.numpy_dtype

    def rnd(v: Any) -> np.ndarray:  # PyTorch computes in the input dtype, rounding after every operation
        return np.asarray(v).astype(npdt).astype(F32) if dt in HALF else np.asarray(v)

    x = self._data.astype(F32) if dt in HALF else self._data
    lo, hi = rnd(np.asarray(min).astype(npdt)), rnd(np.asarray(max).astype(npdt))
    if lo == hi and x.size:
        lo, hi = np.nanmin(x), np.nanmax(x)  # the data's range
    if lo == hi:
        lo, hi = rnd(lo - 1), rnd(hi + 1)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_num(lo)}, {_num(hi)}] is not finite")
    tok = quiet()
    try:
        inside = x[(x >= lo) & (x <= hi)]
        pos = rnd(rnd(rnd(inside - lo) * np.asarray(bins, x.dtype)) / rnd(hi - lo)).astype(_NP_I64)
        pos = np.minimum(pos, bins - 1)  # the right edge belongs to the last bin
    finally:
        loud(tok)
    return wrap(np.bincount(pos, minlength=bins).astype(npdt))
