"""Large float matrix products on the C extension's thread pool, through one single-threaded BLAS GEMM.

``_ckernels.gemm`` cuts the result into one block of rows or columns per pool thread and calls a
BLAS library's ``cblas_sgemm``/``cblas_dgemm`` once per block, single-threaded.  The library is
MKL's ``libmkl_rt`` when the ``mkl`` wheel is installed (``pip install torchplug-cpu[mkl]``; its
sequential threading layer, so MKL starts no threads of its own), else NumPy's own OpenBLAS kept at
one thread.  Either way the pool is the only set of threads a product wakes, and its workers sleep
between loops: no second spinning pool fights the elementwise loops or another process for the
cores.  ``TORCHPLUG_CPU_GEMM=openblas`` skips MKL.

Measured on a 2-vCPU AVX-512 VM (single thread, CPU time, float32): MKL's sequential GEMM is
1.04-1.07x OpenBLAS's on squares from 256 to 2048 and 1.2-1.4x on the MLP-like shapes
(64x784 @ 784x256 with a transposed weight, its backward products); below about 2^21
multiply-adds it is slower (its call overhead), which is why small products stay on NumPy's
``ndarray.dot`` (``_blas_policy``).

Each element of the result is the same dot product over K computed by the same library kernel
whatever the number of blocks: with OpenBLAS the bits equal one thread's and ``ndarray.dot``'s;
MKL picks some kernels by the block's width, so a product can differ in the last bits between one
and two threads.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

import numpy as np

from torchplug_cpu import _native  # (absolute: host-only)

__all__ = ["gemm", "bind", "library", "available", "MKL_SEQUENTIAL"]

MKL_SEQUENTIAL = 1  # MKL_THREADING_SEQUENTIAL (mkl_service.h)
_MKL_LP64, _MKL_ILP64 = 0, 1  # MKL_INTERFACE_LP64 / ILP64

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_K: Any = None  # the C extension once a library is bound
_library = ""  # "mkl", "openblas" or "" (nothing bound)
_tried = False


def _mkl_path() -> str:
    """The file of the ``mkl`` wheel's ``libmkl_rt`` ('' when the wheel is not installed)."""
    from importlib import metadata

    try:
        files = metadata.distribution("mkl").files or ()
    except metadata.PackageNotFoundError:
        return ""
    for f in files:
        if f.name.startswith("libmkl_rt.so"):
            return str(f.locate())
    return ""


def _bind_mkl(K: Any) -> bool:
    path = _mkl_path()
    if not path or not os.path.exists(path):
        return False
    try:
        lib = ctypes.CDLL(path)
        set_layer = lib.MKL_Set_Threading_Layer
        set_interface = lib.MKL_Set_Interface_Layer
    except (OSError, AttributeError):  # not loadable here, or a library without these entry points
        return False
    set_layer.argtypes = set_interface.argtypes = [ctypes.c_int]
    set_layer.restype = set_interface.restype = ctypes.c_int
    # both answer the layer in force: another user of MKL in the process may have chosen first
    if set_layer(MKL_SEQUENTIAL) != MKL_SEQUENTIAL:
        return False  # MKL's own OpenMP/TBB pool would run beside the C pool
    interface = set_interface(_MKL_LP64)
    if interface not in (_MKL_LP64, _MKL_ILP64):
        return False
    return bool(K.load_gemm(path, "cblas_sgemm", "cblas_dgemm", interface == _MKL_ILP64))


def _bind_openblas(K: Any) -> bool:
    from torchplug_cpu import _blas_policy

    lib = _blas_policy.numpy_openblas()
    if lib is None:
        return False
    prefix, suffix = lib._symbol_prefix, lib._symbol_suffix
    return bool(K.load_gemm(lib.filepath, f"{prefix}cblas_sgemm{suffix}", f"{prefix}cblas_dgemm{suffix}",
                            "64" in suffix))


def bind(name: str | None = None) -> str:
    """Bind the GEMM the products use: ``name`` ('mkl' or 'openblas'), else MKL when installed and
    ``TORCHPLUG_CPU_GEMM`` does not say 'openblas', else NumPy's OpenBLAS.  Returns the library bound
    ('' when none could be: the C extension is not built, or no library was found)."""
    global _K, _library, _tried
    from torchplug_cpu import _parallel  # noqa: F401 - importing it gives the pool its thread count

    _tried = True
    K = _native.ckernels
    if K is None or not hasattr(K, "gemm"):
        _K, _library = None, ""
        return ""
    wanted = name or os.environ.get("TORCHPLUG_CPU_GEMM", "").strip().lower() or "mkl"
    order = ("mkl", "openblas") if wanted == "mkl" else ("openblas",)
    for lib in order:
        if (_bind_mkl if lib == "mkl" else _bind_openblas)(K):
            _K, _library = K, lib
            return lib
    _K, _library = None, ""
    return ""


def available() -> bool:
    """Whether the C extension with the pooled GEMM is built (a library is bound on first use)."""
    K = _native.ckernels
    return K is not None and hasattr(K, "gemm")


def library() -> str:
    """The library large products go through: 'mkl', 'openblas', or '' (NumPy's own matmul)."""
    if not _tried:
        bind()
    return _library


def gemm(a: np.ndarray, b: np.ndarray, parts: int) -> np.ndarray | None:
    """``a @ b`` for two 2-d arrays of one float dtype (float32/float64) on up to ``parts`` pool threads;
    None when not done (no library bound, or an operand that is neither C- nor Fortran-contiguous:
    the caller's NumPy path copies it).  A transposed operand (``weight.t()``) reaches BLAS with its
    transpose flag."""
    K = _K
    if K is None:
        if _tried or not bind():
            return None
        K = _K
    if a.flags.c_contiguous:
        ta = False
    elif a.flags.f_contiguous:
        a, ta = a.T, True
    else:
        return None
    if b.flags.c_contiguous:
        tb = False
    elif b.flags.f_contiguous:
        b, tb = b.T, True
    else:
        return None
    m = a.shape[1] if ta else a.shape[0]
    k = a.shape[0] if ta else a.shape[1]
    n = b.shape[0] if tb else b.shape[1]
    dt = a.dtype
    if not (dt is _F32 or dt is _F64) or b.dtype is not dt:
        return None
    out = np.empty((m, n), dt)
    K.gemm(a, b, out, dt is _F64, ta, tb, m, n, k, parts)
    return out
