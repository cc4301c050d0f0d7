"""``matmul``: NumPy's matmul with small products kept on one BLAS thread.

OpenBLAS splits even small GEMMs across its threads, where the hand-off costs more than it
saves.  Measured on 2 vCPUs (one OpenBLAS pool in the process): a 64x64x64 product takes the
same time on one or two threads; from about a million multiply-adds two threads win
(64x128x128: 0.78x the one-thread time, 64x512x256: 0.56x).  So products below ``SMALL_WORK``
multiply-adds run with one thread and larger ones with the count ``torchplug.set_num_threads``
(or the library default) gives.  (An earlier limit of 2^24 had been set while SciPy's second
OpenBLAS pool was also in the process, which made two threads look slower than they are: the
784-256-10 MLP step went from 0.67-0.70x to 0.91-0.93x PyTorch's steps/s at default threads
when its 64x784x256 products moved to two threads.)

The switch is OpenBLAS's own ``openblas_set_num_threads`` on NumPy's copy of the library, found
through threadpoolctl; with another BLAS (MKL, Accelerate) or no threadpoolctl it is a plain
``np.matmul``.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

import numpy as np

__all__ = ["matmul", "axpy_kernels", "set_user_threads", "user_threads", "numpy_blas_path", "SMALL_WORK"]

SMALL_WORK = 1 << 21  # multiply-adds: below this one thread is as fast (and leaves the other core free)

_np_matmul = np.matmul
_setter: Any = None  # ctypes function: openblas_set_num_threads of NumPy's OpenBLAS
_threads = 1  # the user's thread count (what large products use)
_path = ""  # the file of NumPy's OpenBLAS the policy controls
_lib: Any = None  # its threadpoolctl controller (for the cblas symbols)
_current = 1  # the count last set on the library


def _find_setter() -> tuple[Any, int, str, Any]:
    """(openblas_set_num_threads, its current count, library file, controller) of NumPy's OpenBLAS."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None, 1, "", None
    numpy_dir = os.path.dirname(os.path.dirname(np.__file__))
    for lib in ThreadpoolController().lib_controllers:
        path = getattr(lib, "filepath", "") or ""
        if lib.internal_api != "openblas" or not path.startswith(numpy_dir) or "numpy" not in path:
            continue
        try:
            name = f"{lib._symbol_prefix}openblas_set_num_threads{lib._symbol_suffix}"
            fn = getattr(lib.dynlib, name)
        except AttributeError:  # an OpenBLAS without the symbols threadpoolctl expects
            return None, 1, "", None
        fn.argtypes = [ctypes.c_int]
        fn.restype = None
        return fn, int(lib.num_threads), path, lib
    return None, 1, "", None


def set_user_threads(n: int) -> None:
    """Record the thread count large products use (called by ``torchplug.set_num_threads``, which
    has just set the library to ``n``)."""
    global _threads, _current
    _threads = _current = n


def numpy_blas_path() -> str:
    """The file of NumPy's OpenBLAS when the policy controls it ('' otherwise)."""
    return _path if _setter is not None else ""


def user_threads() -> int:
    """The thread count large products use (what ``torchplug.get_num_threads`` reports)."""
    return _threads


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.matmul(a, b)``, on one BLAS thread when the product is small (see the module docstring).

    The library's count is changed only when the wanted one differs from the last one set, so a
    run of small products (a training loop) switches once, not twice per call: waking the pool
    back up after every product cost more than it saved.

    Two float matrices go through ``ndarray.dot``: the same GEMM call (a transposed operand, such as
    ``nn.Linear``'s ``weight.t()``, is passed to BLAS with its transpose flag, not copied; an operand
    without a unit stride is copied by both), with about a microsecond less set-up than the matmul
    ufunc, which is most of an 8x8 product's time.
    """
    global _current
    if _threads > 1 and _setter is not None:
        want = 1 if a.ndim >= 2 and b.ndim >= 2 and a.size * b.shape[-1] < SMALL_WORK else _threads
        if want != _current:
            _setter(want)
            _current = want
    if a.ndim == 2 and b.ndim == 2 and a.dtype.kind in "fc" and a.dtype is b.dtype:
        return a.dot(b)
    return _np_matmul(a, b)



def _one_thread() -> None:
    global _current
    if _current != 1:
        _setter(1)
        _current = 1


def axpy_kernels() -> dict[np.dtype, Any]:
    """``{dtype: axpy(alpha, x, y)}`` (y += alpha * x in place, contiguous float32/float64 arrays of
    one size) on NumPy's own OpenBLAS, one thread; empty when that library cannot be reached.

    Using NumPy's library keeps a second OpenBLAS (SciPy's) and its thread pool out of the
    training loop: two pools on a small machine made steps several times slower.
    """
    if _setter is None or _lib is None:
        return {}
    index = ctypes.c_int64 if "64" in _lib._symbol_suffix else ctypes.c_int  # ILP64 builds take 64-bit sizes
    found = {}
    for dtype, name, scalar in ((np.float32, "cblas_saxpy", ctypes.c_float), (np.float64, "cblas_daxpy", ctypes.c_double)):
        try:
            fn = getattr(_lib.dynlib, f"{_lib._symbol_prefix}{name}{_lib._symbol_suffix}")
        except AttributeError:
            return {}
        fn.argtypes = [index, scalar, ctypes.c_void_p, index, ctypes.c_void_p, index]
        fn.restype = None

        def axpy(alpha: float, x: np.ndarray, y: np.ndarray, _fn: Any = fn) -> None:
            _one_thread()  # a memory-bound loop: threads only add hand-off cost
            _fn(y.size, alpha, x.ctypes.data, 1, y.ctypes.data, 1)

        found[np.dtype(dtype)] = axpy
    return found


def _init() -> None:
    global _setter, _threads, _current, _path, _lib
    _setter, _threads, _path, _lib = _find_setter()
    _current = _threads


_init()
