"""cpu kernels: aten's three FFT primitives (``_fft_r2c``, ``_fft_c2r``, ``_fft_c2c``) on ``numpy.fft``.

NumPy's pocketfft computes float32/complex64 in single precision, like PyTorch's cpu kernels, and the
cuda backend re-runs this module with ``np`` bound to CuPy, so ``np.fft`` is cuFFT there.  Results are laid
out as PyTorch's cpu kernels lay them out (``torchplug._fft_support``): the transform runs on the input
permuted into that order, and the contiguous result is transposed back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from torchplug._fft_support import c2c_order, c2r_order, check_c2r_size, check_input, r2c_order
from torchplug._tensor import make_tensor
from torchplug.library import KernelTable

from .. import _common as C
from .._common import Tensor

TABLE = KernelTable("CPU")

# aten's fft_norm_mode (0 none, 1 1/sqrt(n), 2 1/n) as NumPy's norm= of a forward and of an inverse transform
_FORWARD_NORM = ("backward", "ortho", "forward")
_INVERSE_NORM = ("forward", "ortho", "backward")


def _strides(t: Tensor) -> list[int]:
    item = t._data.itemsize
    return [s // item for s in t._data.strides]


def _run(x: np.ndarray, order: list[int], dims: Sequence[int], fn: Any, out_shape: list[int], out_dtype: Any,
         **kwargs: Any) -> Tensor:
    """``fn`` over ``dims`` of ``x`` permuted into ``order``; the result in ``x``'s dim order, with the strides
    of a tensor contiguous in ``order``."""
    if x.size == 0:  # an empty batch: nothing to transform (pocketfft refuses zero-length batches)
        root = np.zeros([out_shape[d] for d in order], out_dtype)
    else:
        root = np.ascontiguousarray(fn(x.transpose(order), axes=[order.index(d) for d in dims], **kwargs))
    inverse = [order.index(i) for i in range(len(order))]
    return make_tensor(root.transpose(inverse), C.NP_TO_DTYPE[root.dtype], C.CPU, C.KEYSET, C.storage(root))


@TABLE.impl("aten::_fft_c2c")
def fft_c2c(self: Tensor, dim: Sequence[int], normalization: int, forward: bool) -> Tensor:
    x = self._data
    check_input("_fft_c2c", self._dtype, x.ndim, dim, normalization, True)
    if not dim:
        return C.wrap(x.copy())
    fn, norm = (np.fft.fftn, _FORWARD_NORM) if forward else (np.fft.ifftn, _INVERSE_NORM)
    return _run(x, c2c_order(_strides(self), dim), dim, fn, list(x.shape), x.dtype, norm=norm[normalization])


@TABLE.impl("aten::_fft_r2c")
def fft_r2c(self: Tensor, dim: Sequence[int], normalization: int, onesided: bool) -> Tensor:
    x = self._data
    check_input("_fft_r2c", self._dtype, x.ndim, dim, normalization, False)
    shape = list(x.shape)
    if onesided:
        shape[dim[-1]] = shape[dim[-1]] // 2 + 1
    out_dtype = np.result_type(x.dtype, np.complex64)
    fn = np.fft.rfftn if onesided else np.fft.fftn
    return _run(x, r2c_order(_strides(self), dim), dim, fn, shape, out_dtype, norm=_FORWARD_NORM[normalization])


@TABLE.impl("aten::_fft_c2r")
def fft_c2r(self: Tensor, dim: Sequence[int], normalization: int, last_dim_size: int) -> Tensor:
    x = self._data
    check_input("_fft_c2r", self._dtype, x.ndim, dim, normalization, True)
    check_c2r_size(x.shape, dim, last_dim_size)
    shape = list(x.shape)
    shape[dim[-1]] = last_dim_size
    sizes = [x.shape[d] for d in dim[:-1]] + [last_dim_size]
    return _run(x, c2r_order(_strides(self), x.shape, dim), dim, np.fft.irfftn, shape, x.real.dtype,
                s=sizes, norm=_INVERSE_NORM[normalization])
