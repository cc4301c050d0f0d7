"""``interpolate(mode='bicubic')``: ATen's upsample_bicubic2d as differentiable tensor ops.

Each output row (column) is a weighted sum of four input rows (columns): the source coordinate is
``scale * o`` (align_corners) or ``scale * (o + 0.5) - 0.5``, its floor ``i`` and fraction ``t``
give the taps ``i - 1 .. i + 2`` (clamped into the input, as upsample_get_value_bounded does) and
Keys' cubic convolution weights with ``A = -0.75``.  The two passes are ``index_select`` along one
spatial dim and a broadcast multiply-add, so autograd differentiates them with no extra code
(``index_select``'s backward adds the clamped taps' gradients together, as ATen's backward does).
Coordinates are computed in the input's precision (float for half types, as ATen's opmath).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from torchplug._base import dtype as D
from torchplug._dispatch.aten import A
from torchplug._tensor.tensor import Tensor

__all__ = ["upsample_bicubic2d"]

_A = -0.75


def _taps(in_size: int, out_size: int, align_corners: bool, scale: float | None, np_dtype: Any) -> tuple[Any, Any]:
    """The (out_size, 4) clamped input indices and their weights for one spatial dim."""
    f = np_dtype.type
    if align_corners:
        step = f(in_size - 1) / f(out_size - 1) if out_size > 1 else f(0)
    else:
        step = f(1.0) / f(scale) if scale is not None and scale > 0 else f(in_size) / f(out_size)
    o = np.arange(out_size, dtype=np_dtype)
    real = step * o if align_corners else step * (o + f(0.5)) - f(0.5)
    base = np.floor(real)
    t = (real - base).astype(np_dtype)
    a = f(_A)

    def near(x: Any) -> Any:  # |x| <= 1
        return ((a + f(2)) * x - (a + f(3))) * x * x + f(1)

    def far(x: Any) -> Any:  # 1 < |x| < 2
        return ((a * x - f(5) * a) * x + f(8) * a) * x - f(4) * a

    one = f(1)
    weights = np.stack([far(t + one), near(t), near(one - t), far(one - t + one)], axis=1)
    index = base.astype(np.int64)[:, None] + np.arange(-1, 3, dtype=np.int64)
    return np.clip(index, 0, in_size - 1), weights


def _pass(x: Tensor, dim: int, out_size: int, align_corners: bool, scale: float | None, np_dtype: Any) -> Tensor:
    """Resample ``x`` along ``dim`` (2 or 3) to ``out_size``."""
    from torchplug._tensor.creation import tensor

    in_size = x.shape[dim]
    index, weights = _taps(in_size, out_size, align_corners, scale, np_dtype)
    shape = [out_size, 1] if dim == 2 else [out_size]
    out = None
    for k in range(4):
        rows = A.index_select(x, dim, tensor(index[:, k], device=x.device))
        w = tensor(weights[:, k], dtype=x.dtype, device=x.device).reshape(shape)
        term = A.mul(rows, w)
        out = term if out is None else A.add(out, term)
    return out


def upsample_bicubic2d(input: Tensor, output_size: list[int], align_corners: bool, scale_h: float | None,
                       scale_w: float | None) -> Tensor:
    """Bicubic resampling of the last two dims of a 4-D ``input`` to ``output_size``."""
    from torchplug._ops.composites import scalar_type_name

    dtype = input.dtype
    if not dtype.is_floating_point:
        if dtype is D.uint8:
            raise NotImplementedError("interpolate(mode='bicubic') on uint8 tensors (ATen's separable integer kernel) "
                                      "is not supported by torchplug yet; convert to float32 and back")
        raise NotImplementedError(f'"compute_indices_weights_cubic" not implemented for \'{scalar_type_name(dtype)}\'')
    in_h, in_w = input.shape[2], input.shape[3]
    out_h, out_w = output_size
    if in_h <= 0 or in_w <= 0 or out_h <= 0 or out_w <= 0:
        raise RuntimeError("Input and output sizes should be greater than 0, but got input "
                           f"(H: {in_h}, W: {in_w}) output (H: {out_h}, W: {out_w})")
    np_dtype = np.dtype(np.float64 if dtype is D.float64 else np.float32)
    low = dtype in (D.float16, D.bfloat16)  # computed in float, rounded once at the end (ATen's opmath)
    x = A._to_copy(input, dtype=D.float32) if low else input
    out = _pass(_pass(x, 2, out_h, align_corners, scale_h, np_dtype), 3, out_w, align_corners, scale_w, np_dtype)
    return A._to_copy(out, dtype=dtype) if low else out
