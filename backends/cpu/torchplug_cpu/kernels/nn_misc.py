"""cpu kernels: embedding backward/renorm, one_hot, padding (constant, reflect, replicate) and upsampling
(nearest, nearest-exact, linear/bilinear/trilinear), with backward ops.

Padding and upsampling are separable: each spatial dim maps output positions to source indices
(and weights), applied with ``np.take`` forward and a per-axis ``np.bincount`` backward.
"""

from __future__ import annotations

import math

import numpy as np

from torchplug._base import dtype as D
from torchplug._ops import nn_shapes as S
from torchplug.library import KernelTable

from .. import _common as C
from .._common import HALF, Tensor
from .core import fresh

TABLE = KernelTable("CPU")

_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)


def _cdt(dt) -> np.dtype:
    return _F32 if dt in HALF else dt.numpy_dtype


def _out(arr, dt) -> Tensor:
    arr = np.asarray(arr)  # (np.ascontiguousarray would make 0-dim results 1-dim)
    if not arr.flags.c_contiguous:
        arr = arr.copy()
    return fresh(arr.astype(dt.numpy_dtype, copy=False))


def _scatter_axis(g: np.ndarray, axis: int, idx: np.ndarray, size: int, weights: np.ndarray | None = None) -> np.ndarray:
    """out[..., i, ...] = sum over j with idx[j] == i of g[..., j, ...] (* weights[j]) along ``axis``."""
    moved = np.moveaxis(g, axis, -1)
    lead = moved.shape[:-1]
    m = math.prod(lead)
    vals = moved.reshape(m, -1)
    if weights is not None:
        vals = vals * weights
    flat = (np.arange(m, dtype=_I64)[:, None] * size + idx[None, :]).ravel()
    out = np.bincount(flat, weights=vals.ravel(), minlength=m * size).astype(g.dtype, copy=False)
    return np.moveaxis(out.reshape(lead + (size,)), -1, axis)


# ---- embedding ---------------------------------------------------------------------------------------------------
@TABLE.impl("aten::embedding_dense_backward")
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    dt = grad_output._dtype
    cdt = _cdt(dt)
    idx = indices._data.reshape(-1).astype(_I64, copy=False)
    dim = grad_output._data.shape[-1] if grad_output._data.ndim else 1
    g = grad_output._data.astype(cdt, copy=False).reshape(-1, dim)
    keep = idx != padding_idx
    if scale_grad_by_freq:
        counts = np.bincount(idx, minlength=num_weights)
        g = g / counts[idx][:, None].astype(cdt)
    out = np.zeros((num_weights, dim), cdt)
    np.add.at(out, idx[keep], g[keep])
    return _out(out, dt)


@TABLE.impl("aten::embedding_renorm_")
def embedding_renorm_(self, indices, max_norm, norm_type):
    if self._data.ndim != 2:
        raise RuntimeError(f"embedding_renorm_(): expected self to be 2D, but got {self._data.ndim}D")
    if indices._dtype not in (D.int64, D.int32):
        raise RuntimeError(
            "Expected tensor for argument #2 'indices' to have one of the following scalar types: Long, Int; but got "
            f"torch.{C.torch_name(indices._dtype)}Tensor instead (while checking arguments for embedding_renorm_)"
        )
    w = self._data
    rows = np.unique(indices._data.reshape(-1))
    sub = w[rows].astype(np.float64 if w.dtype == np.float64 else np.float32)
    if norm_type == math.inf:
        norms = np.abs(sub).max(axis=1)
    elif norm_type == 0:
        norms = (sub != 0).sum(axis=1).astype(sub.dtype)
    else:
        norms = (np.abs(sub) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    big = norms > max_norm
    scale = max_norm / (norms[big] + 1e-7)
    w[rows[big]] = (sub[big] * scale[:, None]).astype(w.dtype)
    return self


@TABLE.impl("aten::one_hot")
def one_hot(self, num_classes=-1):
    if self._dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    x = self._data
    if x.size == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return fresh(np.zeros(x.shape + (num_classes,), _I64))
    if x.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(x.max()) + 1
    elif num_classes <= x.max():
        raise RuntimeError("Class values must be smaller than num_classes.")
    return fresh((x[..., None] == np.arange(num_classes)).astype(_I64))


# ---- padding -------------------------------------------------------------------------------------------------------
@TABLE.impl("aten::constant_pad_nd")
def constant_pad_nd(self, pad, value=0):
    pad = tuple(pad)
    x = self._data
    shape = S.constant_pad_shape(x.shape, pad)
    nd = x.ndim
    diff = nd - len(pad) // 2
    src, dst = [slice(None)] * nd, [slice(None)] * nd
    for i in range(diff, nd):
        j = 2 * (nd - i - 1)
        lo, hi = pad[j], pad[j + 1]
        s0, s1 = max(-lo, 0), x.shape[i] - max(-hi, 0)
        length = max(s1 - s0, 0)
        src[i] = slice(s0, s0 + length)
        dst[i] = slice(max(lo, 0), max(lo, 0) + length)
    dt = self._dtype
    if all(p <= 0 for p in pad):  # PyTorch only narrows (and clones): nothing is filled, the value is not converted
        return fresh(x[tuple(src)].copy())
    out = np.full(shape, C.scalar_to(value, dt), dt.numpy_dtype)
    out[tuple(dst)] = x[tuple(src)]
    return fresh(out)


def _pad_index(mode: str, size: int, lo: int, hi: int) -> np.ndarray:
    idx = np.arange(-lo, size + hi, dtype=_I64)
    if mode == "reflect":
        idx = np.abs(idx)
        return np.where(idx >= size, 2 * (size - 1) - idx, idx)
    return np.clip(idx, 0, size - 1)


def _pad_nd(mode: str, dims: int, self: Tensor, padding) -> Tensor:
    S.pad_check(mode, self._data.shape, padding, dims)
    x = self._data
    if self._dtype is D.bool_:
        name = "reflection" if mode == "reflect" else "replication"
        raise C.not_implemented(f"{name}_pad{dims}d", self._dtype)
    nd = x.ndim
    for i in range(dims):
        axis = nd - 1 - i
        x = np.take(x, _pad_index(mode, x.shape[axis], padding[2 * i], padding[2 * i + 1]), axis=axis)
    return fresh(np.ascontiguousarray(x))


def _pad_nd_backward(mode: str, dims: int, grad_output: Tensor, self: Tensor, padding) -> Tensor:
    S.pad_check(mode, self._data.shape, padding, dims)
    dt = grad_output._dtype
    cdt = _cdt(dt)
    g = grad_output._data.astype(cdt, copy=False)
    nd = g.ndim
    for i in range(dims):
        axis = nd - 1 - i
        size = self._data.shape[axis]
        g = _scatter_axis(g, axis, _pad_index(mode, size, padding[2 * i], padding[2 * i + 1]), size)
    return _out(g, dt)


def _register_pads() -> None:
    for mode, name in (("reflect", "reflection"), ("replicate", "replication")):
        for dims in (1, 2, 3):
            def fw(self, padding, _m=mode, _d=dims):
                return _pad_nd(_m, _d, self, padding)

            def bw(grad_output, self, padding, _m=mode, _d=dims):
                return _pad_nd_backward(_m, _d, grad_output, self, padding)

            fw.__name__ = f"{name}_pad{dims}d"
            bw.__name__ = f"{name}_pad{dims}d_backward"
            TABLE.impl(f"aten::{name}_pad{dims}d")(fw)
            TABLE.impl(f"aten::{name}_pad{dims}d_backward")(bw)


_register_pads()


# ---- upsampling ------------------------------------------------------------------------------------------------------
def _nearest_index(n_in: int, n_out: int, scale, exact: bool) -> np.ndarray:
    o = np.arange(n_out, dtype=np.float32)
    if not exact:
        if n_out == n_in:
            return np.arange(n_out, dtype=_I64)
        if n_out == 2 * n_in:
            return np.arange(n_out, dtype=_I64) >> 1
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(n_in) / np.float32(n_out)
    src = np.floor((o + np.float32(0.5)) * s) if exact else np.floor(o * s)
    return np.minimum(src.astype(_I64), n_in - 1)


def _linear_weights(n_in: int, n_out: int, scale, align_corners: bool, cdt):
    acc = np.dtype(np.float64) if cdt == np.float64 else _F32
    if align_corners:
        s = acc.type((n_in - 1) / (n_out - 1)) if n_out > 1 else acc.type(0)
    else:
        s = acc.type(1.0 / scale) if scale is not None and scale > 0 else acc.type(n_in) / acc.type(n_out)
    o = np.arange(n_out, dtype=acc)
    src = s * o if align_corners else np.maximum(s * (o + acc.type(0.5)) - acc.type(0.5), acc.type(0))
    i0 = np.minimum(np.floor(src).astype(_I64), n_in - 1)
    lam = np.clip(src - i0, 0, 1).astype(acc)
    i1 = i0 + (i0 < n_in - 1)
    return i0, i1, (1 - lam).astype(cdt), lam.astype(cdt)


def _check_upsample(dims: int, self_shape, output_size) -> tuple[int, ...]:
    return S.upsample_check(self_shape, output_size, dims)


def _upsample(mode: str, dims: int, self: Tensor, output_size, scales, align_corners=False) -> Tensor:
    out_shape = _check_upsample(dims, self._data.shape, output_size)
    dt = self._dtype
    if mode == "linear" and dt not in C.FLOATING:
        # the kernel names PyTorch's messages show
        raise C.not_implemented("upsample_bilinear2d_channels_last" if dims == 2 else "compute_indices_weights_linear",
                                dt)
    if mode != "linear" and not (dt in C.FLOATING or dt is D.uint8):  # nearest: floating types and uint8
        raise C.not_implemented("upsample_nearest2d_channels_last" if dims == 2 else "compute_indices_weights_nearest",
                                dt)
    x = self._data
    if mode == "linear":
        x = x.astype(_cdt(dt), copy=False)
    for i in range(dims - 1, -1, -1):
        axis = 2 + i
        n_in, n_out = x.shape[axis], out_shape[axis]
        if mode == "linear":
            i0, i1, w0, w1 = _linear_weights(n_in, n_out, scales[i], align_corners, x.dtype)
            bshape = [1] * x.ndim
            bshape[axis] = n_out
            x = np.take(x, i0, axis=axis) * w0.reshape(bshape) + np.take(x, i1, axis=axis) * w1.reshape(bshape)
        else:
            x = np.take(x, _nearest_index(n_in, n_out, scales[i], mode == "nearest-exact"), axis=axis)
    return _out(x, dt)


def _upsample_backward(mode: str, dims: int, grad_output: Tensor, output_size, input_size, scales,
                       align_corners=False) -> Tensor:
    input_size = tuple(input_size)
    if len(input_size) != dims + 2:
        raise RuntimeError(f"It is expected input_size equals to {dims + 2}, but got size {len(input_size)}")
    out_shape = _check_upsample(dims, input_size, output_size)
    if tuple(grad_output._data.shape) != out_shape:
        raise RuntimeError(
            f"Expected grad_output to have the same shape as output; output.size({2}) = {out_shape[2]} but got "
            f"grad_output.size({2}) = {grad_output._data.shape[2] if grad_output._data.ndim > 2 else 0}"
        )
    dt = grad_output._dtype
    g = grad_output._data.astype(_cdt(dt), copy=False)
    for i in range(dims):
        axis = 2 + i
        n_in, n_out = input_size[axis], out_shape[axis]
        if mode == "linear":
            i0, i1, w0, w1 = _linear_weights(n_in, n_out, scales[i], align_corners, g.dtype)
            g = _scatter_axis(g, axis, i0, n_in, w0) + _scatter_axis(g, axis, i1, n_in, w1)
        else:
            g = _scatter_axis(g, axis, _nearest_index(n_in, n_out, scales[i], mode == "nearest-exact"), n_in)
    return _out(g, dt)


def _register_upsample() -> None:
    for dims in (1, 2, 3):
        for mode, prefix in (("nearest", "upsample_nearest"), ("nearest-exact", "_upsample_nearest_exact")):
            def fw(self, output_size, *scales, _m=mode, _d=dims):
                return _upsample(_m, _d, self, output_size, scales)

            def bw(grad_output, output_size, input_size, *scales, _m=mode, _d=dims):
                return _upsample_backward(_m, _d, grad_output, output_size, input_size, scales)

            TABLE.impl(f"aten::{prefix}{dims}d")(fw)
            TABLE.impl(f"aten::{prefix}{dims}d_backward")(bw)
        name = ["linear1d", "bilinear2d", "trilinear3d"][dims - 1]

        def lfw(self, output_size, align_corners, *scales, _d=dims):
            return _upsample("linear", _d, self, output_size, scales, align_corners)

        def lbw(grad_output, output_size, input_size, align_corners, *scales, _d=dims):
            return _upsample_backward("linear", _d, grad_output, output_size, input_size, scales, align_corners)

        TABLE.impl(f"aten::upsample_{name}")(lfw)
        TABLE.impl(f"aten::upsample_{name}_backward")(lbw)


_register_upsample()
