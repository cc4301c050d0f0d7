"""cpu kernels: reductions (sum, mean, prod, amax/amin, max/min, argmax/argmin, var/std, all/any).

Dims follow PyTorch: ``None`` (or an empty list) reduces everything, negative dims wrap, a
0-dim tensor accepts dim 0 and -1.  Integer and bool sums/products accumulate in int64;
float16/bfloat16 accumulate in float32 and round once, as PyTorch's cpu kernels do.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug.library import KernelTable

from torchplug_cpu import _parallel as P  # (absolute: one host module; it declines non-NumPy arrays)

from .. import _common as C
from .._common import COMPLEX, F32, FLOATING, HALF, INTEGRAL, Tensor, loud, not_implemented, quiet, wrap

TABLE = KernelTable("CPU")

_BOOL = D.bool_
_INTLIKE = INTEGRAL | {_BOOL}
_NP_BOOL = np.dtype(np.bool_)
_NP_I64 = np.dtype(np.int64)
# ufunc reductions: the same loops as np.sum/np.prod without their Python-level overhead
_SUM = np.add.reduce
_PROD = np.multiply.reduce


_PLAIN = frozenset((D.float32, D.float64))
_MIN_ITEMS = P.MIN_ITEMS
_FLOAT8 = frozenset(D.FLOAT8_DTYPES)  # PyTorch's cpu reductions have no float8 kernels


def _acc(dt: D.dtype) -> np.dtype:
    """The accumulation dtype for results of dtype ``dt``."""
    return F32 if dt in HALF else dt.numpy_dtype


def _finish(r: Any, dt: D.dtype) -> Tensor:
    r = np.asarray(r)
    if r.dtype != dt.numpy_dtype:
        tok = quiet()  # float32 -> half may overflow to inf, silently as in PyTorch
        try:
            r = r.astype(dt.numpy_dtype)
        finally:
            loud(tok)
    return wrap(r)


def _axes(x: np.ndarray, dim: Any) -> tuple[int, ...]:
    return C.reduce_dims(dim, x.ndim)


def _count(x: np.ndarray, axes: tuple[int, ...]) -> int:
    return math.prod(x.shape[a] for a in axes)


# ---- sum / mean / prod ------------------------------------------------------------------------------
def _accumulating(self: Tensor, dtype: D.dtype | None) -> tuple[np.ndarray, D.dtype]:
    """Input data (cast to ``dtype`` if given) and the result dtype; ints and bool give int64."""
    x = self._data
    if dtype is not None:
        if x.dtype != dtype.numpy_dtype:
            x = x.astype(dtype.numpy_dtype)
        return x, dtype
    return x, (D.int64 if self._dtype in _INTLIKE else self._dtype)


def reduce_sum(self: Tensor, dim: Any = None, keepdim: bool = False, dtype: D.dtype | None = None) -> Tensor:
    if dim is None and dtype is None and not keepdim and self._dtype in _PLAIN:  # fast path: a full float sum
        x = self._data
        tok = quiet()  # float32 overflow gives inf, silently as in PyTorch
        try:
            if x.size >= _MIN_ITEMS:
                s = P.total(x)  # pairwise, in double, on the thread pool (see _parallel)
                if s is not None:
                    return wrap(np.asarray(s, x.dtype))
            return wrap(_SUM(x, axis=None, dtype=x.dtype))
        finally:
            loud(tok)
    if self._dtype in _FLOAT8:
        raise not_implemented("sum_cpu", self._dtype)
    x, dt = _accumulating(self, dtype)
    axes = _axes(x, dim)
    tok = quiet()
    try:
        r = P.reduce_dim(P.RED_SUM, x, axes, keepdim) if dt in _PLAIN else None  # C, on the pool (see _parallel)
        if r is None:
            r = _SUM(x, axis=axes, dtype=_acc(dt), keepdims=keepdim)
    finally:
        loud(tok)
    return _finish(r, dt)


# registered as its C fast path (the full float sum without Python frames) where _cquick is built
TABLE.impl("aten::sum")(C.cquick.Sum(_SUM, reduce_sum) if C.cquick is not None else reduce_sum)


@TABLE.impl("aten::prod")
def prod(self: Tensor, dim: int | None = None, keepdim: bool = False, dtype: D.dtype | None = None) -> Tensor:
    if self._dtype in _FLOAT8:
        raise not_implemented("prod_out_cpu", self._dtype)
    x, dt = _accumulating(self, dtype)
    axes = _axes(x, None if dim is None else (dim,))
    tok = quiet()
    try:
        r = _PROD(x, axis=axes, dtype=_acc(dt), keepdims=keepdim)
    finally:
        loud(tok)
    return _finish(r, dt)


@TABLE.impl("aten::mean")
def mean(self: Tensor, dim: Any = None, keepdim: bool = False, dtype: D.dtype | None = None) -> Tensor:
    if self._dtype in _FLOAT8:
        raise not_implemented("sum_cpu", self._dtype)
    if dtype is None and self._dtype not in FLOATING and self._dtype not in COMPLEX:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
            f"Got: {C.torch_name(self._dtype)}"
        )
    if dtype is not None and dtype not in FLOATING and dtype not in COMPLEX:
        raise RuntimeError(
            "mean(): could not infer output dtype. Optional dtype must be either a floating point or complex dtype. "
            f"Got: {C.torch_name(dtype)}"
        )
    x, dt = _accumulating(self, dtype)
    axes = _axes(x, dim)
    tok = quiet()
    try:
        s = P.total(x) if x.size >= _MIN_ITEMS and dt in _PLAIN and len(axes) == x.ndim and not keepdim else None
        if s is not None:  # the sum rounded to the dtype first, then divided in it, as the NumPy path does
            return wrap(np.asarray(s, x.dtype) / np.asarray(x.size, x.dtype))
        r = P.reduce_dim(P.RED_SUM, x, axes, keepdim) if dt in _PLAIN else None
        if r is None:
            r = _SUM(x, axis=axes, dtype=_acc(dt), keepdims=keepdim)
        r = r / np.asarray(_count(x, axes), _acc(dt))
    finally:
        loud(tok)
    return _finish(r, dt)


# ---- amax / amin / max / min ------------------------------------------------------------------------
def _check_nonempty(name: str, x: np.ndarray, axes: tuple[int, ...], specified: bool) -> None:
    if x.size:
        return
    if not specified:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim "
            "with the 'dim' argument."
        )
    for a in axes:
        if x.shape[a] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")


def _extreme(name: str, np_fn: Any, kname: str, op: int) -> Any:
    def kernel(self: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
        x = self._data
        axes = _axes(x, dim)
        _check_nonempty(name, x, axes, bool(dim))
        if (self._dtype in COMPLEX or self._dtype in _FLOAT8) and x.size:  # (an empty result needs no kernel)
            raise not_implemented(kname, self._dtype)
        r = P.reduce_dim(op, x, axes, keepdim) if self._dtype in _PLAIN else None  # C, on the pool (see _parallel)
        if r is not None:
            return wrap(r)
        tok = quiet()
        try:
            return wrap(np.asarray(np_fn(x, axis=axes, keepdims=keepdim)))
        finally:
            loud(tok)

    kernel.__name__ = name
    return kernel


TABLE.impl("aten::amax")(_extreme("amax", np.maximum.reduce, "max_values_cpu", P.RED_MAX))
TABLE.impl("aten::amin")(_extreme("amin", np.minimum.reduce, "min_values_cpu", P.RED_MIN))


def _full(name: str, np_fn: Any, kname: str) -> Any:
    def kernel(self: Tensor) -> Tensor:
        x = self._data
        _check_nonempty(name, x, (), False)
        if self._dtype in COMPLEX or self._dtype in _FLOAT8:
            raise not_implemented(kname, self._dtype)
        tok = quiet()
        try:
            return wrap(np.asarray(np_fn(x, axis=None)))
        finally:
            loud(tok)

    kernel.__name__ = name
    return kernel


TABLE.impl("aten::max")(_full("max", np.maximum.reduce, "max_all"))
TABLE.impl("aten::min")(_full("min", np.minimum.reduce, "min_all"))


def _arg(x: np.ndarray, np_arg: Any, dim: int, keepdim: bool) -> np.ndarray:
    """Index of the first extreme (NaN counts as extreme) along ``dim``, as int64."""
    tok = quiet()
    try:
        idx = np_arg(x, axis=dim, keepdims=keepdim)
    finally:
        loud(tok)
    return np.asarray(idx).astype(_NP_I64, copy=False)


def _with_indices(name: str, np_arg: Any) -> Any:
    def kernel(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        x = self._data
        d = C.wrap_dim(dim, x.ndim)
        if x.ndim:
            _check_nonempty(name, x, (d,), True)
        if self._dtype in COMPLEX:
            raise RuntimeError(f"{name}(): does not support complex input")
        if x.ndim == 0:
            return wrap(x.copy()), wrap(np.zeros((), _NP_I64))
        idx = _arg(x, np_arg, d, True)
        values = np.take_along_axis(x, idx, axis=d)
        if not keepdim:
            idx = idx.squeeze(d)
            values = values.squeeze(d)
        return wrap(values), wrap(idx)

    kernel.__name__ = f"{name}_dim"
    return kernel


TABLE.impl("aten::max.dim")(_with_indices("max", np.argmax))
TABLE.impl("aten::min.dim")(_with_indices("min", np.argmin))


def _argextreme(name: str, np_arg: Any) -> Any:
    def kernel(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
        dt = self._dtype
        if dt is _BOOL:
            raise RuntimeError(f"{name}(): does not support bool input")
        if dt in COMPLEX:
            raise RuntimeError(f"{name}(): does not support complex input")
        if dt in _FLOAT8:
            raise not_implemented(f"{name}_cpu", dt)
        x = self._data
        if dim is None:
            if x.size == 0:
                raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            idx = _arg(x.reshape(-1), np_arg, 0, False)
            return wrap(idx.reshape((1,) * x.ndim) if keepdim else idx)
        d = C.wrap_dim(dim, x.ndim)
        if x.ndim == 0:
            return wrap(np.zeros((), _NP_I64))
        if x.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
        return wrap(_arg(x, np_arg, d, keepdim))

    kernel.__name__ = name
    return kernel


TABLE.impl("aten::argmax")(_argextreme("argmax", np.argmax))
TABLE.impl("aten::argmin")(_argextreme("argmin", np.argmin))


# ---- var / std -----------------------------------------------------------------------------------
def _variance(name: str, self: Tensor, dim: Any, correction: Any, keepdim: bool) -> tuple[np.ndarray, D.dtype]:
    dt = self._dtype
    if dt not in FLOATING and dt not in COMPLEX:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if correction is None:
        correction = 1
    out_dt = dt.to_real()
    x = self._data
    acc = _acc(dt)
    if x.dtype != acc:
        x = x.astype(acc)
    axes = _axes(x, dim)
    n = _count(x, axes)
    dof = n - correction
    if dof <= 0:
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor "
            "(input numel divided by output numel).",
            UserWarning,
            stacklevel=3,
        )
    tok = quiet()
    try:
        mean = _SUM(x, axis=axes, keepdims=True) / np.asarray(n, acc)
        dev = x - mean
        sq = (dev.real * dev.real + dev.imag * dev.imag) if dev.dtype.kind == "c" else dev * dev
        r = _SUM(sq, axis=axes, keepdims=keepdim) / np.asarray(max(0, dof), sq.dtype)
    finally:
        loud(tok)
    return r, out_dt


@TABLE.impl("aten::var")
def var(self: Tensor, dim: Any = None, correction: Any = None, keepdim: bool = False) -> Tensor:
    r, dt = _variance("var", self, dim, correction, keepdim)
    return _finish(r, dt)


@TABLE.impl("aten::std")
def std(self: Tensor, dim: Any = None, correction: Any = None, keepdim: bool = False) -> Tensor:
    r, dt = _variance("std", self, dim, correction, keepdim)
    tok = quiet()
    try:
        r = np.sqrt(r)
    finally:
        loud(tok)
    return _finish(r, dt)


# ---- all / any -------------------------------------------------------------------------------------
def _logical_reduce(np_fn: Any) -> Any:
    def kernel(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
        x = self._data
        tok = quiet()
        try:
            truth = x if x.dtype == _NP_BOOL else x != 0
            axes = () if dim is not None and len(dim) == 0 else _axes(x, dim)  # dim=() reduces nothing
            r = np.asarray(np_fn(truth, axis=axes, keepdims=keepdim))
        finally:
            loud(tok)
        return wrap(r.astype(np.uint8) if self._dtype is D.uint8 else r)

    return kernel


TABLE.impl("aten::all")(_logical_reduce(np.logical_and.reduce))
TABLE.impl("aten::any")(_logical_reduce(np.logical_or.reduce))
