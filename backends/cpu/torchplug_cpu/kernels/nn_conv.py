"""cpu kernels: convolution (1-3d, transposed, grouped) by im2col + one GEMM, its backward, im2col/col2im.

The sliding windows are a strided view of the zero-padded input laid out as
``(groups, C/g, *kernel, N, *out)``; one reshape copies it into the column matrix and one
``np.matmul`` per group set does the work.  Loops run only over kernel positions (col2im),
never over the batch or spatial positions.  float16/bfloat16 compute in float32.
"""

from __future__ import annotations

import math
import threading
import weakref
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from torchplug._base import dtype as D
from torchplug._ops import nn_shapes as S
from torchplug.library import KernelTable
from torchplug_cpu._blas_policy import user_threads

from .. import _common as C
from .._common import HALF, INTEGRAL, Tensor
from .core import fresh

TABLE = KernelTable("CPU")

_F32 = np.dtype(np.float32)
_CONV_TYPE = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}
_SLOW_CONV_DTYPES = C.FLOATING | INTEGRAL  # slow_conv2d_cpu / slow_conv3d_cpu (compute_columns3d)
_LONG_FLOATS = C.FLOATING | {D.int64}  # slow_conv_dilated<>, slow_conv_transpose2d/3d


def _type_str(t: Tensor) -> str:
    return f"torch.{C.torch_name(t._dtype)}Tensor"


def _cdt(dt) -> np.dtype:
    return _F32 if dt in HALF else dt.numpy_dtype


def _pad_input(x: np.ndarray, padding: tuple[int, ...]) -> np.ndarray:
    if not any(padding):
        return x
    shape = x.shape[:2] + tuple(s + 2 * p for s, p in zip(x.shape[2:], padding))
    out = np.zeros(shape, x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(p, p + s) for s, p in zip(x.shape[2:], padding))] = x
    return out


def _columns(x: np.ndarray, groups: int, ksize: tuple[int, ...], stride, padding, dilation, out_sp) -> np.ndarray:
    """The column matrix ``(groups, C/g * prod(k), N * prod(out))`` of the input ``x`` zero-padded by ``padding``."""
    n, c = x.shape[:2]
    geometry = _geometry_2d(x.shape, x.dtype, ksize, stride, padding, dilation, out_sp)
    if geometry is not None:  # one pass in C (1-d and 2-d windows over float32/float64)
        cols = np.empty((groups, c // groups * math.prod(ksize), n * math.prod(out_sp)), x.dtype)
        C.ckernels.im2col(np.ascontiguousarray(x), cols, x.dtype.itemsize == 8, geometry)
        return cols
    xp = _pad_input(x, padding)
    cg = c // groups
    st = xp.strides
    sp = st[2:]
    shape = (groups, cg, *ksize, n, *out_sp)
    strides = (cg * st[1], st[1], *(s * d for s, d in zip(sp, dilation)), st[0], *(s * t for s, t in zip(sp, stride)))
    view = as_strided(xp, shape, strides, writeable=False)
    return view.reshape(groups, cg * math.prod(ksize), n * math.prod(out_sp))


def _geometry_2d(in_shape, dtype: np.dtype, ksize, stride, padding, dilation, out_sp) -> tuple[int, ...] | None:
    """The C kernels' ``(N, C, H, W, KH, KW, SH, SW, PH, PW, DH, DW, OH, OW)`` for windows over an input
    of ``in_shape`` (1-d as height 1), or None where they do not apply (no C build, 3-d windows, or a
    dtype they lack)."""
    if C.ckernels is None or len(ksize) > 2 or not C.native_float(dtype):
        return None
    if len(ksize) == 1:
        return (*in_shape[:2], 1, in_shape[2], 1, ksize[0], 1, stride[0], 0, padding[0], 1, dilation[0],
                1, out_sp[0])
    return (*in_shape, *ksize, *stride, *padding, *dilation, *out_sp)


class _ColumnMemo(threading.local):
    """The last forward's column matrix, reused by the weight gradient of the same input (PyTorch's
    slow_conv2d keeps its ``finput`` columns the same way): one im2col copy fewer per training step.

    Keyed by the input array (held weakly), its storage version (an in-place write in between
    invalidates it) and the geometry.  Only matrices up to ``LIMIT`` bytes are kept, and only for
    a weight that requires grad (no extra memory held in inference).
    """

    LIMIT = 8 << 20

    def __init__(self) -> None:
        self.ref: Any = None
        self.key: Any = None
        self.cols: Any = None

    def remember(self, input: Tensor, geometry: tuple[Any, ...]) -> Any:
        """A ``columns`` function for ``conv_forward`` that keeps what it computes."""

        def columns(x: np.ndarray, *args: Any) -> np.ndarray:
            cols = _columns(x, *args)
            self.forget()
            if cols.nbytes <= self.LIMIT:
                try:
                    self.ref = weakref.ref(input._data)
                except TypeError:  # an array type without weak references: nothing is kept
                    return cols
                self.key = (input._storage.version, geometry)
                self.cols = cols
            return cols

        return columns

    def recall(self, input: Tensor, geometry: tuple[Any, ...]) -> Any:
        """A ``columns`` function for ``conv_backward_weight`` that reuses the forward's matrix."""
        ref, key, cols = self.ref, self.key, self.cols
        self.forget()  # used (or stale) once: the memory goes with the step
        if (cols is not None and ref is not None and ref() is input._data
                and key == (input._storage.version, geometry)):
            return lambda *_: cols
        return _columns

    def forget(self) -> None:
        self.ref = self.key = self.cols = None


_MEMO = _ColumnMemo()


def conv_forward(x: np.ndarray, w: np.ndarray, stride, padding, dilation, groups: int, columns: Any = None) -> np.ndarray:
    """Plain (non-transposed) convolution of arrays in the computation dtype, without bias.

    ``columns(x, groups, ksize, stride, padding, dilation, out_sp)`` makes the column matrix
    (``_columns`` unless given)."""
    n = x.shape[0]
    o = w.shape[0]
    ksize = w.shape[2:]
    out_sp = S.conv_output_size(x.shape, w.shape, stride, padding, dilation)[2:]
    if n == 0 or 0 in out_sp or x.shape[1] == 0:
        return np.zeros((n, o, *out_sp), x.dtype)
    cols = (columns or _columns)(x, groups, ksize, stride, padding, dilation, out_sp)
    wm = w.reshape(groups, o // groups, -1)
    if groups == 1:
        y = C.matmul(wm[0], cols[0])
    else:
        y = C.matmul(wm, cols).reshape(o, -1)
    # (O, N, L) -> (N, O, L)
    return np.ascontiguousarray(y.reshape(o, n, -1).transpose(1, 0, 2)).reshape(n, o, *out_sp)


def conv_backward_input(g: np.ndarray, w: np.ndarray, in_sp, stride, padding, dilation, groups: int) -> np.ndarray:
    """The input gradient of a convolution (also the forward of a transposed one): col2im of W^T @ g."""
    n, o = g.shape[:2]
    cg = w.shape[1]
    c = cg * groups
    ksize = w.shape[2:]
    out_sp = g.shape[2:]
    dims = len(ksize)
    cols = None
    if n and c and math.prod(out_sp):
        gm = g.transpose(1, 0, *range(2, 2 + dims)).reshape(groups, o // groups, -1)  # (g, O/g, N*L)
        wm = w.reshape(groups, o // groups, -1)  # (g, O/g, Cg*K)
        cols = C.matmul(wm.transpose(0, 2, 1), gm) if groups > 1 else C.matmul(wm[0].T, gm[0])[None]
        geometry = _geometry_2d((n, c, *in_sp), cols.dtype, ksize, stride, padding, dilation, out_sp)
        if geometry is not None:  # one pass in C, straight into the (N, C, *in) layout
            dx = np.zeros((n, c, *in_sp), cols.dtype)
            C.ckernels.col2im(np.ascontiguousarray(cols), dx, cols.dtype.itemsize == 8, geometry)
            return dx
    padded = tuple(s + 2 * p for s, p in zip(in_sp, padding))
    # Room for windows reaching past the padded input (strides that skip the last rows).
    room = tuple(max(pd, (os - 1) * st + d * (k - 1) + 1) for pd, os, st, d, k in zip(padded, out_sp, stride, dilation, ksize))
    dxp = np.zeros((c, n, *room), g.dtype)
    if cols is not None:
        cols = cols.reshape(c, *ksize, n, *out_sp)
        for pos in np.ndindex(*ksize):
            sl = tuple(slice(k * d, k * d + (os - 1) * st + 1, st) for k, d, os, st in zip(pos, dilation, out_sp, stride))
            dxp[(slice(None), slice(None)) + sl] += cols[(slice(None),) + pos]
    crop = tuple(slice(p, p + s) for p, s in zip(padding, in_sp))
    return np.ascontiguousarray(dxp[(slice(None), slice(None)) + crop].transpose(1, 0, *range(2, 2 + dims)))


def conv_backward_weight(g: np.ndarray, x: np.ndarray, w_shape, stride, padding, dilation, groups: int,
                         columns: Any = None) -> np.ndarray:
    """The weight gradient of a convolution: g @ columns(x)^T per group."""
    n, o = g.shape[:2]
    ksize = tuple(w_shape[2:])
    out_sp = g.shape[2:]
    dims = len(ksize)
    if n == 0 or not math.prod(out_sp):
        return np.zeros(tuple(w_shape), g.dtype)
    cols = (columns or _columns)(x, groups, ksize, stride, padding, dilation, out_sp)  # (g, Cg*K, N*L)
    gm = g.transpose(1, 0, *range(2, 2 + dims)).reshape(groups, o // groups, -1)
    if groups == 1:
        dw = C.matmul(gm[0], cols[0].T)
    else:
        dw = C.matmul(gm, cols.transpose(0, 2, 1))
    return dw.reshape(w_shape)


def _check(input: Tensor, weight: Tensor, bias: Tensor | None, stride, padding, dilation, transposed,
           output_padding, groups):
    dt = input._dtype
    # the dtypes of the cpu backend torch's _select_conv_backend picks (its AT_DISPATCH list); a zero batch or
    # zero channels goes to no backend. The backend refuses the input's dtype before comparing the others' dtypes.
    spatial3d = len(weight._data.shape) > 4
    if transposed:
        name, dtypes = ("slow_conv_transpose3d_out_cpu" if spatial3d else "slow_conv_transpose2d_out_cpu"), _LONG_FLOATS
    elif any(d != 1 for d in dilation):
        name, dtypes = "slow_conv_dilated<>", _LONG_FLOATS
    else:
        name, dtypes = ("compute_columns3d" if spatial3d else "slow_conv2d_cpu"), _SLOW_CONV_DTYPES
    empty = _no_backend(input)
    refused = dt not in dtypes and not empty
    same = refused or empty  # (no dtype comparison either)
    params = S.check_conv(
        input._data.shape, weight._data.shape, None if bias is None else bias._data.shape, stride, padding,
        dilation, transposed, output_padding, groups, _type_str(input), _type_str(input if same else weight),
        None if bias is None else _type_str(input if same else bias),
        S.conv_uses_onednn(input._data.shape, weight._data.shape, stride, dilation, groups, _type_str(input),
                           user_threads()) if weight._dtype != dt else None,
    )
    if refused:
        raise C.not_implemented(name, dt)
    return params


def _no_backend(input: Tensor) -> bool:
    """A zero batch or zero channels: torch's ConvBackend::Empty, which computes nothing in any dtype."""
    shape = input._data.shape
    return len(shape) >= 2 and 0 in shape[:2]


@TABLE.impl("aten::convolution")
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    stride, padding, dilation, output_padding = _check(input, weight, bias, stride, padding, dilation, transposed,
                                                       output_padding, groups)
    dt = input._dtype
    if _no_backend(input):  # ConvBackend::Empty: input * weight[0] (+ bias[0]), so the 0-dim operands' promotion
        dt = D._result_type_parts((dt,), (weight._dtype,), ())
        dt = dt if bias is None else D._result_type_parts((dt,), (bias._dtype,), ())
    cdt = _cdt(dt)
    x = input._data.astype(cdt, copy=False)
    w = weight._data.astype(cdt, copy=False)
    if transposed:
        shape = S.conv_transpose_output_size(x.shape, w.shape, stride, padding, dilation, output_padding, groups)
        if any(s < 0 for s in shape):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {S.fmt_sizes(shape)}")
        y = conv_backward_input(x, w, shape[2:], stride, padding, dilation, groups)
    else:
        keep = None
        if weight._requires_grad:
            keep = _MEMO.remember(input, (x.dtype, w.shape, stride, padding, dilation, groups))
        elif _MEMO.cols is not None:
            _MEMO.forget()
        y = conv_forward(x, w, stride, padding, dilation, groups, keep)
    if bias is not None:
        y += bias._data.astype(cdt, copy=False).reshape((-1,) + (1,) * (y.ndim - 2))
    return fresh(y.astype(dt.numpy_dtype, copy=False))


@TABLE.impl("aten::convolution_backward")
def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask):
    stride, padding, dilation, output_padding = _check(input, weight, None, stride, padding, dilation, transposed,
                                                       output_padding, groups)
    dt = input._dtype
    cdt = _cdt(dt)
    npdt = dt.numpy_dtype
    g = grad_output._data.astype(cdt, copy=False)
    x = input._data.astype(cdt, copy=False)
    w = weight._data.astype(cdt, copy=False)
    gi = gw = gb = None
    if output_mask[0]:
        if transposed:
            gi = conv_forward(g, w, stride, padding, dilation, groups)
        else:
            gi = conv_backward_input(g, w, x.shape[2:], stride, padding, dilation, groups)
        gi = fresh(gi.astype(npdt, copy=False))
    if output_mask[1]:
        if transposed:
            gw = conv_backward_weight(x, g, w.shape, stride, padding, dilation, groups)
        else:
            cols = _MEMO.recall(input, (x.dtype, w.shape, stride, padding, dilation, groups))
            gw = conv_backward_weight(g, x, w.shape, stride, padding, dilation, groups, cols)
        gw = fresh(gw.astype(npdt, copy=False))
    if output_mask[2]:
        axes = (0,) + tuple(range(2, g.ndim))
        gb = fresh(g.sum(axis=axes).astype(npdt, copy=False))
    return gi, gw, gb


# ---- im2col / col2im (F.unfold / F.fold) ------------------------------------------------------------------
@TABLE.impl("aten::im2col")
def im2col(self, kernel_size, dilation, padding, stride):
    k, d, p, s = tuple(kernel_size), tuple(dilation), tuple(padding), tuple(stride)
    out_shape = S.im2col_check(self._data.shape, k, d, p, s)
    x = self._data
    batched = x.ndim == 4
    if not batched:
        x = x[None]
    n, c, h, w = x.shape
    oh = (h + 2 * p[0] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1
    ow = (w + 2 * p[1] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
    xp = _pad_input(x, p)
    st = xp.strides
    # a step along an axis of extent 1 is never taken: 0 there keeps a huge stride or dilation from overflowing
    steps = [st[2] * d[0] if k[0] > 1 else 0, st[3] * d[1] if k[1] > 1 else 0, st[2] * s[0] if oh > 1 else 0,
             st[3] * s[1] if ow > 1 else 0]
    view = as_strided(xp, (n, c, k[0], k[1], oh, ow), (st[0], st[1], *steps), writeable=False)
    out = view.reshape(n, c * k[0] * k[1], oh * ow)
    return fresh(np.ascontiguousarray(out if batched else out[0]).reshape(out_shape))


@TABLE.impl("aten::col2im")
def col2im(self, output_size, kernel_size, dilation, padding, stride):
    k, d, p, s = tuple(kernel_size), tuple(dilation), tuple(padding), tuple(stride)
    out_shape = S.col2im_check(self._data.shape, tuple(output_size), k, d, p, s)
    cols = self._data
    batched = cols.ndim == 3
    if not batched:
        cols = cols[None]
    n = cols.shape[0]
    c = out_shape[-3]
    oh_, ow_ = output_size
    bh = (oh_ + 2 * p[0] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1
    bw = (ow_ + 2 * p[1] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
    dt = self._dtype
    cdt = _cdt(dt)
    g = cols.astype(cdt, copy=False).reshape(n, c, k[0], k[1], bh, bw)
    room = (max(oh_ + 2 * p[0], (bh - 1) * s[0] + d[0] * (k[0] - 1) + 1),
            max(ow_ + 2 * p[1], (bw - 1) * s[1] + d[1] * (k[1] - 1) + 1))
    out = np.zeros((n, c, *room), cdt)
    for i in range(k[0]):
        for j in range(k[1]):
            out[:, :, i * d[0]: i * d[0] + (bh - 1) * s[0] + 1: s[0], j * d[1]: j * d[1] + (bw - 1) * s[1] + 1: s[1]] += g[:, :, i, j]
    out = out[:, :, p[0]: p[0] + oh_, p[1]: p[1] + ow_]
    out = np.ascontiguousarray(out if batched else out[0]).astype(dt.numpy_dtype, copy=False)
    return fresh(out)


_ = (Any, INTEGRAL)
