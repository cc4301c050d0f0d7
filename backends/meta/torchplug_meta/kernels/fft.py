"""meta kernels for aten's FFT primitives: result shape, dtype and the layout of torch's meta tensors
(its cuFFT layout, ``torchplug._fft_layout``), with the dtype checks of ``torchplug_cpu.kernels.fft``."""

from __future__ import annotations

from collections.abc import Sequence

from torchplug import _dtype as D
from torchplug._fft_layout import cufft_c2c_order, cufft_c2r_order, cufft_r2c_order, strides_for_order
from torchplug.library import KernelTable

from .. import _common as C

TABLE = KernelTable("Meta")

_REAL = (D.float32, D.float64)
_COMPLEX = (D.complex64, D.complex128)
_TO_COMPLEX = {D.float32: D.complex64, D.float64: D.complex128}
_TO_REAL = {D.complex64: D.float32, D.complex128: D.float64}


def _check(self: C.Tensor, allowed: tuple[D.dtype, ...], dims: Sequence[int], normalization: int) -> None:
    name = C.scalar_type_name(self._dtype)
    if self._dtype not in allowed:
        if allowed is _COMPLEX:
            raise RuntimeError(f"Only supports complex dtypes, but found: {name}")
        if self._dtype in _COMPLEX:
            raise RuntimeError(f"Only supports floating-point dtypes, but found: {name}")
        raise RuntimeError(f"FFT doesn't support tensors of type: {name}")
    if not 0 <= normalization <= 2:
        raise RuntimeError(f"Invalid FFT normalization mode {normalization}: expected 0 (none), 1 (by 1/sqrt(n)) or 2 (by 1/n)")
    ndim = self.dim()
    for d in dims:
        if not 0 <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {d})")


def _result(sizes: Sequence[int], dtype: D.dtype, order: list[int]) -> C.Tensor:
    return C.new(sizes, dtype, strides_for_order(sizes, order))


@TABLE.impl("aten::_fft_c2c")
def fft_c2c(self: C.Tensor, dim: Sequence[int], normalization: int, forward: bool) -> C.Tensor:
    _check(self, _COMPLEX, dim, normalization)
    if not dim:
        return C.new_like(self)
    return _result(C.shape(self), self._dtype, cufft_c2c_order(C.strides(self), C.shape(self), dim))


@TABLE.impl("aten::_fft_r2c")
def fft_r2c(self: C.Tensor, dim: Sequence[int], normalization: int, onesided: bool) -> C.Tensor:
    _check(self, _REAL, dim, normalization)
    if not dim:
        raise RuntimeError("_fft_r2c: dim must name at least one dimension to transform")
    sizes = list(C.shape(self))
    if onesided:
        sizes[dim[-1]] = sizes[dim[-1]] // 2 + 1
    return _result(sizes, _TO_COMPLEX[self._dtype], cufft_r2c_order(C.strides(self), C.shape(self), dim, onesided))


@TABLE.impl("aten::_fft_c2r")
def fft_c2r(self: C.Tensor, dim: Sequence[int], normalization: int, last_dim_size: int) -> C.Tensor:
    _check(self, _COMPLEX, dim, normalization)
    if not dim:
        raise RuntimeError("_fft_c2r: dim must name at least one dimension to transform")
    in_sizes = C.shape(self)
    last = dim[-1]
    if last_dim_size < 1 or in_sizes[last] != last_dim_size // 2 + 1:
        raise RuntimeError(
            f"_fft_c2r: an output of {last_dim_size} points along dim {last} needs {last_dim_size // 2 + 1} "
            f"input points there (n // 2 + 1), but the input has {in_sizes[last]}"
        )
    sizes = list(in_sizes)
    sizes[last] = last_dim_size
    return _result(sizes, _TO_REAL[self._dtype], cufft_c2r_order(in_sizes, dim, C.strides(self)))
