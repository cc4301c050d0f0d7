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
           "UNARY_OPS", "reduce_dim", "RED_SUM", "RED_MAX", "RED_MIN", "chunked"]

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
    _reset_workers(n)
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


# ``reduce_dim`` ops (the C kernel's numbering)
RED_SUM, RED_MAX, RED_MIN = 0, 1, 2
# Inner runs (the items after the reduced dims) up to which the C reduction beats NumPy's: NumPy
# reduces a short strided inner run item by item (64x4096x16 over dim 1: 12-16 ms against 1.5-3 ms),
# while over long inner runs, and for the maximum of whole rows, its SIMD loops win.
_SHORT_INNER = 64


def reduce_dim(op: int, x: Any, axes: tuple[int, ...], keepdim: bool) -> np.ndarray | None:
    """The sum (``RED_SUM``), maximum or minimum over ``axes`` (adjacent dims) of a large C-contiguous
    float32/float64 array, in C on the thread pool; None if not done (the caller's NumPy call runs).

    Sums run whatever the thread count, so a result does not depend on it: rows pairwise in double
    as ``total`` does, other layouts adding rows in order into double accumulators.
    """
    if _K is None or x.__class__ is not _ndarray or x.size < MIN_ITEMS or x.dtype not in _FLOATS:
        return None
    if not axes or not x.flags.c_contiguous:
        return None
    first, last = min(axes), max(axes)
    if last - first + 1 != len(set(axes)):
        return None  # dims that are not one run
    shape = x.shape
    outer, r, inner = 1, 1, 1
    for n in shape[:first]:
        outer *= n
    for n in shape[first:last + 1]:
        r *= n
    for n in shape[last + 1:]:
        inner *= n
    if inner > _SHORT_INNER or (inner == 1 and op != RED_SUM) or r == 0:
        return None
    out = np.empty(shape[:first] + (1,) * (last - first + 1) * keepdim + shape[last + 1:], x.dtype)
    _K.reduce_dim(op, x, out, x.dtype is _F64, outer, r, inner)
    return out


_workers: Any = None  # a ThreadPoolExecutor for ``chunked``, made on first use
_CHUNK_MIN = 1 << 16  # items per chunk: below this a hand-off costs more than the chunk
_BLOCK = 1 << 14  # items per block of a composite function (64 KiB of float32 per temporary)


def chunked(fn: Any, x: np.ndarray, out: np.ndarray, row: int = 0) -> bool:
    """``out[...] = fn(x)`` for an elementwise NumPy function, cut into one contiguous chunk per thread;
    False if not done (small or non-contiguous arrays; a ufunc on one thread).  With ``row`` > 0 the
    chunks are whole rows of that length, and ``fn`` gets each chunk as a (rows, row) array (a row-wise
    function such as softmax over the last dim).

    A function that is not one ufunc (sigmoid's ``1 / (1 + exp(-x))``, softmax's passes) runs on
    blocks of about ``_BLOCK`` items, on one thread too: its temporaries then stay in cache instead of
    being fresh multi-megabyte arrays per pass (4M-item sigmoid: 15.6 ms whole; page faults on fresh
    temporaries in two threads made it 33 ms).

    For the transcendental ufuncs (exp, log, tanh, sin...) NumPy's own SIMD loops are several times
    faster per element than libm called per element from C (glibc's expf: 3-4x slower than NumPy's
    AVX-512 exp on float32), so the chunks run NumPy's loops: NumPy releases the GIL inside them, and
    the chunks run at once on Python worker threads (the calling thread takes the first).  Each chunk
    computes its items exactly as the whole call would, so results do not depend on the thread count.
    """
    n = out.size
    if n < MIN_ITEMS or x.__class__ is not _ndarray or out.__class__ is not _ndarray:
        return False
    if x.shape != out.shape or not (x.flags.c_contiguous and out.flags.c_contiguous):
        return False
    unit = row if row > 0 else 1
    if n % unit:
        return False
    ufunc = isinstance(fn, np.ufunc) and row <= 0
    parts = min(_threads, n // _CHUNK_MIN, n // unit)
    if parts < 2 and ufunc:
        return False  # one ufunc call on one thread is the caller's own
    parts = max(parts, 1)
    global _workers
    if _workers is None and parts > 1:
        from concurrent.futures import ThreadPoolExecutor

        _workers = ThreadPoolExecutor(max_workers=_threads - 1, thread_name_prefix="torchplug-cpu")
    flat_x, flat_out = x.reshape(-1), out.reshape(-1)
    rows = n // unit
    bounds = [rows * p // parts * unit for p in range(parts + 1)]
    block = max(_BLOCK // unit, 1) * unit  # whole rows

    def run(p: int) -> None:
        lo, hi = bounds[p], bounds[p + 1]
        if ufunc:
            fn(flat_x[lo:hi], out=flat_out[lo:hi])
            return
        for start in range(lo, hi, block):
            stop = min(start + block, hi)
            if row > 0:
                flat_out[start:stop].reshape(-1, unit)[...] = fn(flat_x[start:stop].reshape(-1, unit))
            else:
                flat_out[start:stop] = fn(flat_x[start:stop])

    def work(p: int) -> None:
        with np.errstate(all="ignore"):  # the caller computes quietly (its NumPy error state is not the worker's)
            run(p)

    futures = [_workers.submit(work, p) for p in range(1, parts)]
    run(0)
    for f in futures:
        f.result()
    return True


def _reset_workers(n: int) -> None:
    global _workers
    if _workers is not None and _workers._max_workers != max(n - 1, 1):
        _workers.shutdown(wait=False)
        _workers = None


set_threads(_default_threads())
