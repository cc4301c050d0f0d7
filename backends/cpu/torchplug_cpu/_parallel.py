"""Large float32/float64 loops on all cores: the C extension's thread pool, or NumPy.

``torchplug_cpu._ckernels`` cuts a loop of at least ``MIN_ITEMS`` items into one range per thread
(``torchplug.set_num_threads``, default: the CPUs this process may run on).  Each helper here
returns True when it did the work and False when the caller's NumPy call should run instead: the
extension is not built, only one thread is allowed, the arrays are small, not C-contiguous, not
float32/float64, of mixed dtypes or shapes (broadcasting), or the output partly overlaps an input.

* Elementwise (``binary``, ``unary``): add, sub, mul, div, neg, abs, sqrt and square are exactly
  rounded, so the threaded loops give the same bits as NumPy's and as one thread.
* ``total`` (sum, mean): pairwise summation in double per thread range, the ranges added in order
  (the summation order is described in ``_ckernels.c``); it runs for every large contiguous float
  array whatever the thread count, so a result does not depend on it.  float32 sums are rounded
  once at the end, so they can differ from NumPy's float32 pairwise sum in the last places.
* ``copy``: a contiguous source, or one whose last dim is contiguous, into a contiguous
  destination of the same dtype.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

__all__ = ["MIN_ITEMS", "set_threads", "threads", "binary", "binary_scalar", "unary", "square", "total", "copy", "OPS",
           "UNARY_OPS"]

# Items below which one thread is as fast: the pool's ranges are at least 2^16 items (2 x 256 KiB
# for float32), so a loop needs two of them before a second thread can take one.
MIN_ITEMS = 1 << 17
_COPY_BYTES = 1 << 20

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_FLOATS = (_F32, _F64)
_ndarray = np.ndarray

# ufunc -> the op number of ``_ckernels.binary``/``unary``
OPS = {np.add: 0, np.subtract: 1, np.multiply: 2, np.true_divide: 3}
UNARY_OPS = {np.negative: 0, np.absolute: 1, np.sqrt: 2}


def _load() -> Any:
    from . import _common

    return _common.ckernels


_K = _load()
_threads = 1


def set_threads(n: int) -> None:
    """The most threads one large loop uses (``torchplug.set_num_threads`` calls this)."""
    global _threads
    _threads = n
    if _K is not None:
        _K.set_num_threads(n)


def threads() -> int:
    """The thread count large loops use."""
    return _threads


def _default_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity API (macOS)
        return max(1, os.cpu_count() or 1)


def _dense(a: Any) -> bool:
    return a.__class__ is _ndarray and a.flags.c_contiguous


def binary(ufunc: Any, x: Any, y: Any, out: np.ndarray) -> bool:
    """``ufunc(x, y, out=out)`` for two arrays of ``out``'s dtype and shape, threaded; False if not done."""
    if _threads < 2 or out.size < MIN_ITEMS or _K is None:
        return False
    dt = out.dtype
    if not (dt in _FLOATS and _dense(x) and _dense(y) and _dense(out) and x.dtype == dt and y.dtype == dt
            and x.shape == out.shape and y.shape == out.shape):
        return False
    op = OPS.get(ufunc)
    if op is None:
        return False
    try:
        _K.binary(op, x, y, out, dt is _F64)
    except ValueError:  # partial overlap of out with an input: NumPy buffers it
        return False
    return True


def binary_scalar(ufunc: Any, x: Any, scalar: Any, out: np.ndarray, scalar_first: bool = False) -> bool:
    """``ufunc(x, scalar)`` (or ``ufunc(scalar, x)``) into ``out`` for a Python float or int; False if not done."""
    if _threads < 2 or out.size < MIN_ITEMS or _K is None:
        return False
    dt = out.dtype
    sc = scalar.__class__
    if not ((sc is float or sc is int) and dt in _FLOATS and _dense(x) and _dense(out) and x.dtype == dt
            and x.shape == out.shape):
        return False
    op = OPS.get(ufunc)
    if op is None:
        return False
    if sc is int and abs(scalar) > 1 << 53:  # not exactly a double: NumPy rounds it straight to the dtype
        return False
    try:
        _K.binary_scalar(op, x, float(scalar), out, dt is _F64, scalar_first)
    except (ValueError, OverflowError):
        return False
    return True


def unary(ufunc: Any, x: np.ndarray, out: np.ndarray) -> bool:
    """``ufunc(x, out=out)`` for neg/abs/sqrt of a float array, threaded; False if not done."""
    if _threads < 2 or out.size < MIN_ITEMS or _K is None:
        return False
    dt = out.dtype
    if not (dt in _FLOATS and _dense(x) and _dense(out) and x.dtype == dt and x.shape == out.shape):
        return False
    op = UNARY_OPS.get(ufunc)
    if op is None:
        return False
    try:
        _K.unary(op, x, out, dt is _F64)
    except ValueError:
        return False
    return True


def square(x: np.ndarray, out: np.ndarray) -> bool:
    """``x * x`` into ``out``, threaded; False if not done."""
    if _threads < 2 or out.size < MIN_ITEMS or _K is None:
        return False
    dt = out.dtype
    if not (dt in _FLOATS and _dense(x) and _dense(out) and x.dtype == dt and x.shape == out.shape):
        return False
    try:
        _K.unary(3, x, out, dt is _F64)
    except ValueError:
        return False
    return True


def total(x: np.ndarray) -> float | None:
    """The sum of a large contiguous float32/float64 array as a Python float (double), or None."""
    if x.__class__ is not _ndarray or x.size < MIN_ITEMS or _K is None or x.dtype not in _FLOATS:
        return None
    if not x.flags.c_contiguous:
        return None
    return _K.sum(x, x.dtype is _F64)


def copy(dst: np.ndarray, src: Any) -> bool:
    """``dst[...] = src`` for a contiguous ``dst`` and a same-dtype, same-shape ``src`` whose last dim
    is contiguous, threaded; False if not done (the arrays may not overlap: callers pass a source
    that is not the destination, and the C checks refuse overlapping spans)."""
    if _threads < 2 or _K is None or src.__class__ is not _ndarray or dst.__class__ is not _ndarray:
        return False
    if dst.nbytes < _COPY_BYTES or not dst.flags.writeable:
        return False
    if src.dtype != dst.dtype or src.shape != dst.shape or not dst.flags.c_contiguous or src.dtype.hasobject:
        return False
    try:
        if src.flags.c_contiguous:
            _K.copy(src, dst)
        elif src.ndim and src.strides[-1] == src.itemsize:
            _K.copy_strided(src, dst)
        else:
            return False
    except ValueError:
        return False
    return True


set_threads(_default_threads())
