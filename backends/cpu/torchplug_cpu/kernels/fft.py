"""cpu kernels: aten's three FFT primitives (``_fft_r2c``, ``_fft_c2r``, ``_fft_c2c``) on ``scipy.fft``.

SciPy's pocketfft computes float32/complex64 in single precision, like PyTorch's cpu kernels, and transforms
several axes in one call (two to three times faster than ``numpy.fft`` here).  The cuda backend re-runs this
module with ``scipy.fft`` bound to ``cupyx.scipy.fft`` (cuFFT).  Results are laid out as PyTorch's cpu
kernels lay them out (``torchplug._ops.fft_support``): the transform runs on the input permuted into that order,
and the contiguous result is transposed back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from torchplug._ops.fft_support import c2c_order, c2r_order, check_c2r_size, check_input, r2c_order
from torchplug._tensor.tensor import make_tensor
from torchplug.library import KernelTable
from torchplug_cpu._blas_policy import user_threads

from .. import _common as C
from .._common import Tensor

sp_fft = C.lazy_import(globals(), "sp_fft", "scipy", "fft")  # imported on the first transform

TABLE = KernelTable("CPU")

# aten's fft_norm_mode (0 none, 1 1/sqrt(n), 2 1/n) as SciPy's norm= of a forward and of an inverse transform
_FORWARD_NORM = ("backward", "ortho", "forward")
_INVERSE_NORM = ("forward", "ortho", "backward")


# SciPy's transforms run on torchplug.get_num_threads() threads (as PyTorch's use its intra-op pool) from
# this many elements on; below it a thread's start costs more than it saves.  CuPy's take no workers=.
_THREADED_FROM = 1 << 16
def _workers(x: np.ndarray) -> dict[str, int]:
    # SciPy's (the host's) transforms take workers=; the cuda backend's family maps scipy.fft to CuPy's
    return {"workers": user_threads()} if x.size >= _THREADED_FROM and sp_fft.__name__ == "scipy.fft" else {}


def _strides(t: Tensor) -> list[int]:
    item = t._data.itemsize
    return [s // item for s in t._data.strides]


def _run(x: np.ndarray, order: list[int], dims: Sequence[int], kind: str, out_shape: list[int], out_dtype: Any,
         norm: str, last_size: int = 0) -> Tensor:
    """The ``kind`` transform (fft, ifft, rfft, irfft) over ``dims`` of ``x`` permuted into ``order``; the
    result in ``x``'s dim order, with the strides of a tensor contiguous in ``order``."""
    identity = order == list(range(len(order)))
    if x.size == 0:  # an empty batch: nothing to transform (pocketfft refuses zero-length batches)
        root = np.zeros([out_shape[d] for d in order], out_dtype)
    else:
        xp = x if identity else x.transpose(order)
        axes = [order.index(d) for d in dims]
        full = kind == "r2c_full"
        if full:
            kind = "rfft"
        if len(axes) == 1:  # the one-dimensional functions skip the n-d argument handling
            extra = {"n": last_size} if kind == "irfft" else {}
            extra.update(_workers(x))
            root = getattr(sp_fft, kind)(xp, axis=axes[0], norm=norm, **extra)
        else:
            extra = {"s": [xp.shape[a] for a in axes[:-1]] + [last_size]} if kind == "irfft" else {}
            extra.update(_workers(x))
            root = getattr(sp_fft, kind + "n")(xp, axes=axes, norm=norm, **extra)
        if full:
            root = _mirror(root, axes, xp.shape[axes[-1]])
        root = np.ascontiguousarray(root)
    view = root if identity else root.transpose([order.index(i) for i in range(len(order))])
    return make_tensor(view, C.NP_TO_DTYPE[root.dtype], C.CPU, C.KEYSET, C.storage(root))


def _mirror(half: np.ndarray, axes: list[int], n: int) -> np.ndarray:
    """The full spectrum of a real signal from its onesided half, as aten's
    ``_fft_fill_with_conjugate_symmetry_``: X[k] = conj(X[-k]) (every transformed axis mirrored), so the
    half's exact zeros (the imaginary part of the DC term) stay +0 as in PyTorch."""
    last = axes[-1]
    rest = np.conj(np.take(half, np.arange(n - half.shape[last], 0, -1), axis=last))
    for a in axes[:-1]:
        rest = np.roll(np.flip(rest, axis=a), 1, axis=a)  # index k -> (-k) mod size
    return np.concatenate([half, rest], axis=last)


@TABLE.impl("aten::_fft_c2c")
def fft_c2c(self: Tensor, dim: Sequence[int], normalization: int, forward: bool) -> Tensor:
    x = self._data
    check_input("_fft_c2c", self._dtype, x.ndim, dim, normalization, True)
    if not dim:
        return C.wrap(x.copy())
    kind, norm = ("fft", _FORWARD_NORM) if forward else ("ifft", _INVERSE_NORM)
    return _run(x, c2c_order(_strides(self), dim), dim, kind, list(x.shape), x.dtype, norm[normalization])


@TABLE.impl("aten::_fft_r2c")
def fft_r2c(self: Tensor, dim: Sequence[int], normalization: int, onesided: bool) -> Tensor:
    x = self._data
    check_input("_fft_r2c", self._dtype, x.ndim, dim, normalization, False)
    shape = list(x.shape)
    if onesided:
        shape[dim[-1]] = shape[dim[-1]] // 2 + 1
    out_dtype = np.result_type(x.dtype, np.complex64)
    kind = "rfft" if onesided else "r2c_full"
    return _run(x, r2c_order(_strides(self), dim), dim, kind, shape, out_dtype, _FORWARD_NORM[normalization])


@TABLE.impl("aten::_fft_c2r")
def fft_c2r(self: Tensor, dim: Sequence[int], normalization: int, last_dim_size: int) -> Tensor:
    x = self._data
    check_input("_fft_c2r", self._dtype, x.ndim, dim, normalization, True)
    check_c2r_size(x.shape, dim, last_dim_size)
    shape = list(x.shape)
    shape[dim[-1]] = last_dim_size
    return _run(x, c2r_order(_strides(self), x.shape, dim), dim, "irfft", shape, x.real.dtype,
                _INVERSE_NORM[normalization], last_dim_size)
