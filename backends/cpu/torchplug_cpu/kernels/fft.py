"""cpu kernels: aten's three FFT primitives (``_fft_r2c``, ``_fft_c2r``, ``_fft_c2c``) on ``numpy.fft``.

NumPy's pocketfft computes float32/complex64 in single precision, like PyTorch's cpu kernels, and the
cuda backend re-runs this module with ``np`` bound to CuPy, so ``np.fft`` is cuFFT there.  Results are laid
out as PyTorch's cpu kernels lay them out (``torchplug._fft_layout``): the transform runs on the input
permuted into that order, and the contiguous result is transposed back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from torchplug import _dtype as D
from torchplug._fft_layout import c2c_order, c2r_order, r2c_order
from torchplug._tensor import make_tensor
from torchplug.library import KernelTable

from .. import _common as C
from .._common import Tensor, torch_name

TABLE = KernelTable("CPU")

_REAL = (D.float32, D.float64)
_COMPLEX = (D.complex64, D.complex128)
# aten's fft_norm_mode (0 none, 1 1/sqrt(n), 2 1/n) as NumPy's norm= of a forward and of an inverse transform
_FORWARD_NORM = ("backward", "ortho", "forward")
_INVERSE_NORM = ("forward", "ortho", "backward")


def _check(self: Tensor, allowed: tuple[D.dtype, ...], dims: Sequence[int], normalization: int) -> None:
    if self._dtype not in allowed:
        if allowed is _COMPLEX:
            raise RuntimeError(f"Only supports complex dtypes, but found: {torch_name(self._dtype)}")
        if self._dtype in _COMPLEX:
            raise RuntimeError(f"Only supports floating-point dtypes, but found: {torch_name(self._dtype)}")
        raise RuntimeError(f"FFT doesn't support tensors of type: {torch_name(self._dtype)}")
    if not 0 <= normalization <= 2:
        raise RuntimeError(f"Invalid FFT normalization mode {normalization}: expected 0 (none), 1 (by 1/sqrt(n)) or 2 (by 1/n)")
    ndim = self._data.ndim
    for d in dims:
        if not 0 <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {d})")


def _run(x: np.ndarray, order: list[int], dims: Sequence[int], fn: Any, **kwargs: Any) -> Tensor:
    """``fn`` over ``dims`` of ``x`` permuted into ``order``, returned in ``x``'s dim order with the
    strides of a result contiguous in ``order``."""
    xp = x.transpose(order)
    axes = [order.index(d) for d in dims]
    if xp.size == 0:  # an empty batch: nothing to transform (pocketfft refuses zero-length batches)
        shape = list(xp.shape)
        out_dtype = np.result_type(x.dtype, np.complex64) if fn is not np.fft.irfftn else np.empty(0, x.dtype).real.dtype
        if fn is np.fft.rfftn:
            shape[axes[-1]] = shape[axes[-1]] // 2 + 1
        elif fn is np.fft.irfftn:
            shape[axes[-1]] = kwargs["s"][-1]
        root = np.zeros(shape, out_dtype)
    else:
        root = np.ascontiguousarray(fn(xp, axes=axes, **kwargs))
    inverse = [order.index(i) for i in range(len(order))]
    dtype = C.NP_TO_DTYPE[root.dtype]
    return make_tensor(root.transpose(inverse), dtype, C.CPU, C.KEYSET, C.storage(root))


@TABLE.impl("aten::_fft_c2c")
def fft_c2c(self: Tensor, dim: Sequence[int], normalization: int, forward: bool) -> Tensor:
    _check(self, _COMPLEX, dim, normalization)
    x = self._data
    if not dim:
        return C.wrap(x.copy())
    order = c2c_order(_strides(self), dim)
    if forward:
        return _run(x, order, dim, np.fft.fftn, norm=_FORWARD_NORM[normalization])
    return _run(x, order, dim, np.fft.ifftn, norm=_INVERSE_NORM[normalization])


@TABLE.impl("aten::_fft_r2c")
def fft_r2c(self: Tensor, dim: Sequence[int], normalization: int, onesided: bool) -> Tensor:
    _check(self, _REAL, dim, normalization)
    if not dim:
        raise RuntimeError("_fft_r2c: dim must name at least one dimension to transform")
    order = r2c_order(_strides(self), dim)
    fn = np.fft.rfftn if onesided else np.fft.fftn
    return _run(self._data, order, dim, fn, norm=_FORWARD_NORM[normalization])


@TABLE.impl("aten::_fft_c2r")
def fft_c2r(self: Tensor, dim: Sequence[int], normalization: int, last_dim_size: int) -> Tensor:
    _check(self, _COMPLEX, dim, normalization)
    if not dim:
        raise RuntimeError("_fft_c2r: dim must name at least one dimension to transform")
    x = self._data
    last = dim[-1]
    if last_dim_size < 1 or x.shape[last] != last_dim_size // 2 + 1:
        raise RuntimeError(
            f"_fft_c2r: an output of {last_dim_size} points along dim {last} needs {last_dim_size // 2 + 1} "
            f"input points there (n // 2 + 1), but the input has {x.shape[last]}"
        )
    order = c2r_order(_strides(self), x.shape, dim)
    sizes = [x.shape[d] for d in dim[:-1]] + [last_dim_size]
    return _run(x, order, dim, np.fft.irfftn, s=sizes, norm=_INVERSE_NORM[normalization])


def _strides(t: Tensor) -> list[int]:
    item = t._data.itemsize
    return [s // item for s in t._data.strides]
