"""meta kernels for aten's FFT primitives: result shape, dtype and the layout of torch's meta tensors
(its cuFFT layout), with the checks of the cpu kernels (both from ``torchplug._ops.fft_support``)."""

from __future__ import annotations

from collections.abc import Sequence

from torchplug._base import dtype as D
from torchplug._ops.fft_support import (
    check_c2r_size, check_input, cufft_c2c_order, cufft_c2r_order, cufft_r2c_order, strides_for_order,
)
from torchplug.library import KernelTable

from .. import _common as C

TABLE = KernelTable("Meta")

_TO_COMPLEX = {D.float32: D.complex64, D.float64: D.complex128}
_TO_REAL = {D.complex64: D.float32, D.complex128: D.float64}


def _result(sizes: Sequence[int], dtype: D.dtype, order: list[int]) -> C.Tensor:
    return C.new(sizes, dtype, strides_for_order(sizes, order))


@TABLE.impl("aten::_fft_c2c")
def fft_c2c(self: C.Tensor, dim: Sequence[int], normalization: int, forward: bool) -> C.Tensor:
    check_input("_fft_c2c", self._dtype, self.dim(), dim, normalization, True)
    if not dim:
        return C.new_like(self)
    return _result(C.shape(self), self._dtype, cufft_c2c_order(C.strides(self), C.shape(self), dim))


@TABLE.impl("aten::_fft_r2c")
def fft_r2c(self: C.Tensor, dim: Sequence[int], normalization: int, onesided: bool) -> C.Tensor:
    check_input("_fft_r2c", self._dtype, self.dim(), dim, normalization, False)
    sizes = list(C.shape(self))
    if onesided:
        sizes[dim[-1]] = sizes[dim[-1]] // 2 + 1
    order = cufft_r2c_order(C.strides(self), C.shape(self), dim, onesided)
    return _result(sizes, _TO_COMPLEX[self._dtype], order)


@TABLE.impl("aten::_fft_c2r")
def fft_c2r(self: C.Tensor, dim: Sequence[int], normalization: int, last_dim_size: int) -> C.Tensor:
    check_input("_fft_c2r", self._dtype, self.dim(), dim, normalization, True)
    in_sizes = C.shape(self)
    check_c2r_size(in_sizes, dim, last_dim_size)
    sizes = list(in_sizes)
    sizes[dim[-1]] = last_dim_size
    return _result(sizes, _TO_REAL[self._dtype], cufft_c2r_order(in_sizes, dim, C.strides(self)))
