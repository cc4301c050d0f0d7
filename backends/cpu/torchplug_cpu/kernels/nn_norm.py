"""cpu kernels: softmax/log_softmax, layer/batch/group norm, dropout, and their backward ops.

float16/bfloat16 compute in float32 ("opmath") and round once.  Statistics (mean, rstd) use
PyTorch's dtype rule: the input dtype, or float32 when a half input meets float32 parameters.
"""

from __future__ import annotations

import math

import numpy as np

from torchplug._base import dtype as D
from torchplug._ops import nn_shapes as S
from torchplug.library import KernelTable
from torchplug_cpu import _parallel as P  # (absolute: one host module; it declines non-NumPy arrays)
from torchplug_cpu import _stream

from .. import _common as C
from .._common import HALF, Tensor
from .core import fresh

TABLE = KernelTable("CPU")

# The ufuncs' own reductions: ndarray.max/.sum go through NumPy's Python wrappers (~1.5 us more per
# call, which shows on the 64x10 softmax of every classification step).
_max_reduce = np.maximum.reduce
_sum_reduce = np.add.reduce

_F32 = np.dtype(np.float32)


def _cdt(dt) -> np.dtype:
    return _F32 if dt in HALF else dt.numpy_dtype


def _arr(t: Tensor | None, cdt: np.dtype):
    return None if t is None else t._data.astype(cdt, copy=False)


def _out(arr: np.ndarray, dt) -> Tensor:
    arr = np.asarray(arr)  # (np.ascontiguousarray would make 0-dim results 1-dim)
    if not arr.flags.c_contiguous:
        arr = arr.copy()
    return fresh(arr.astype(dt.numpy_dtype, copy=False))


# ---- softmax -------------------------------------------------------------------------------------------------
def _softmax_check(name: str, self: Tensor, dim: int, half_to_float: bool) -> int:
    if half_to_float:
        raise RuntimeError(f"{name} with half to float conversion is not supported on CPU")
    nd = self._data.ndim
    d = S.wrap_dim(dim, nd)
    if self._dtype not in C.FLOATING and self._data.size:  # torch returns an empty input of any dtype as it is
        last = nd == 0 or d == nd - 1
        raise C.not_implemented(f"{name}_{'lastdim_' if last else ''}kernel_impl", self._dtype)
    return d


# Rows from this length (in arrays from _NUMPY_ROWS items) take NumPy's passes instead of the C loop:
# the C kernel calls libm's exp per element, NumPy's SIMD exp is several times faster per element, and
# from 32-element rows that outweighs NumPy's extra passes (1024-element rows: 1.9 against 10.5 ms).
_LONG_ROW = 32
_NUMPY_ROWS = 1 << 12


def _rows_in_c(x: np.ndarray, d: int) -> bool:
    """Whether the C row kernels take a softmax of ``x`` over axis ``d`` (the last, non-empty, short rows)."""
    return (C.ckernels is not None and d == x.ndim - 1 and x.size > 0 and C.native_float(x.dtype)
            and (x.shape[-1] < _LONG_ROW or x.size < _NUMPY_ROWS))


def _np_softmax_rows(x: np.ndarray, log: bool) -> np.ndarray:
    """(log_)softmax over the last dim of a 2-d array in NumPy's vectorized passes."""
    shifted = x - _max_reduce(x, axis=-1, keepdims=True)
    if log:
        shifted -= np.log(_sum_reduce(np.exp(shifted), axis=-1, keepdims=True))
        return shifted
    e = np.exp(shifted, out=shifted)
    e /= _sum_reduce(e, axis=-1, keepdims=True)
    return e


def _softmax_long_rows(x: np.ndarray, d: int, log: bool) -> np.ndarray | None:
    """A large float softmax over long last-dim rows: NumPy's passes, one chunk of rows per thread; None
    when it does not apply (the caller's NumPy path runs on one thread)."""
    if not (d == x.ndim - 1 and x.__class__ is np.ndarray and x.flags.c_contiguous and x.size >= P.MIN_ITEMS):
        return None
    out = np.empty(x.shape, x.dtype)
    tok = C.quiet()
    try:
        if P.chunked(lambda rows: _np_softmax_rows(rows, log), x, out, row=x.shape[-1]):
            return out
    finally:
        C.loud(tok)
    return None


def _softmax_rows(x: np.ndarray, log: bool) -> np.ndarray:
    x = np.ascontiguousarray(x)
    out = np.empty(x.shape, x.dtype)
    n = x.shape[-1]
    C.ckernels.softmax(x, out, x.dtype.itemsize == 8, x.size // n, n, log)
    return out


def _softmax_rows_backward(g: np.ndarray, y: np.ndarray, log: bool) -> np.ndarray:
    g, y = np.ascontiguousarray(g), np.ascontiguousarray(y)
    out = np.empty(y.shape, y.dtype)
    n = y.shape[-1]
    C.ckernels.softmax_backward(g, y, out, y.dtype.itemsize == 8, y.size // n, n, log)
    return out


@TABLE.impl("aten::_softmax")
def _softmax(self, dim, half_to_float):
    d = _softmax_check("softmax", self, dim, half_to_float)
    dt = self._dtype
    x = self._data.astype(_cdt(dt), copy=False)
    if x.ndim == 0:
        return _out(np.exp(x - x), dt)
    if x.size == 0:
        return _out(x.copy(), dt)
    if _rows_in_c(x, d):
        return _out(_softmax_rows(x, False), dt)
    r = _softmax_long_rows(x, d, False)
    if r is not None:
        return _out(r, dt)
    tok = C.quiet()
    try:
        e = np.exp(x - _max_reduce(x, axis=d, keepdims=True))
        e /= _sum_reduce(e, axis=d, keepdims=True)
    finally:
        C.loud(tok)
    return _out(e, dt)


@TABLE.impl("aten::_log_softmax")
def _log_softmax(self, dim, half_to_float):
    d = _softmax_check("log_softmax", self, dim, half_to_float)
    dt = self._dtype
    x = self._data.astype(_cdt(dt), copy=False)
    if x.ndim == 0:
        return _out(x - x, dt)
    if x.size == 0:
        return _out(x.copy(), dt)
    if _rows_in_c(x, d):
        return _out(_softmax_rows(x, True), dt)
    r = _softmax_long_rows(x, d, True)
    if r is not None:
        return _out(r, dt)
    tok = C.quiet()
    try:
        shifted = x - _max_reduce(x, axis=d, keepdims=True)
        shifted -= np.log(_sum_reduce(np.exp(shifted), axis=d, keepdims=True))
    finally:
        C.loud(tok)
    return _out(shifted, dt)


def _softmax_bw_dtype(grad_output: Tensor, input_dtype) -> D.dtype:
    return input_dtype


def _check_same_size(name: str, grad_output: Tensor, output: Tensor) -> None:
    g, y = grad_output._data.shape, output._data.shape
    if g != y:  # PyTorch's log_softmax backward skips this check and reads past the smaller one
        raise RuntimeError(f"Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 "
                           f"'output'; but {S.fmt_sizes(g)} does not equal {S.fmt_sizes(y)} (while checking arguments "
                           f"for {name})")


@TABLE.impl("aten::_softmax_backward_data")
def _softmax_backward_data(grad_output, output, dim, input_dtype):
    _check_same_size("softmax_backward", grad_output, output)
    d = S.wrap_dim(dim, output._data.ndim)
    cdt = _cdt(grad_output._dtype)
    g = grad_output._data.astype(cdt, copy=False)
    y = output._data.astype(cdt, copy=False)
    if y.ndim == 0:  # the formula over one element: nan where the output is nan, as in torch
        return _out(g * y - y * (g * y), input_dtype)
    if g.shape == y.shape and g.dtype == y.dtype and _rows_in_c(y, d):
        return _out(_softmax_rows_backward(g, y, False), input_dtype)
    gy = g * y
    return _out(gy - y * _sum_reduce(gy, axis=d, keepdims=True), input_dtype)


@TABLE.impl("aten::_log_softmax_backward_data")
def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    _check_same_size("log_softmax_backward", grad_output, output)
    d = S.wrap_dim(dim, output._data.ndim)
    cdt = _cdt(grad_output._dtype)
    g = grad_output._data.astype(cdt, copy=False)
    y = output._data.astype(cdt, copy=False)
    if y.ndim == 0:  # the formula over one element: nan where the output is nan, as in torch
        return _out(g - np.exp(y) * g, input_dtype)
    if g.shape == y.shape and g.dtype == y.dtype and _rows_in_c(y, d):
        return _out(_softmax_rows_backward(g, y, True), input_dtype)
    return _out(g - np.exp(y) * _sum_reduce(g, axis=d, keepdims=True), input_dtype)


# ---- shared statistics dtype rule --------------------------------------------------------------------------------
def _param_dtype(input: Tensor, *params: Tensor | None):
    """PyTorch's param_scalar_type: float32 statistics for a half input mixed with float32 parameters."""
    dt = input._dtype
    if dt in HALF:
        for p in params:
            if p is not None and p._dtype is D.float32:
                return D.float32
    return dt


def _check_floating(name: str, dt) -> None:
    if dt not in C.FLOATING:
        raise C.not_implemented(name, dt)


# ---- layer norm --------------------------------------------------------------------------------------------------
@TABLE.impl("aten::native_layer_norm")
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    shape = input._data.shape
    axis = S.layer_norm_check(shape, normalized_shape, None if weight is None else weight._data.shape,
                              None if bias is None else bias._data.shape)
    dt = input._dtype
    _check_floating("LayerNormKernelImpl", dt)
    pdt = _param_dtype(input, weight, bias)
    cdt = _cdt(dt)
    x = input._data.astype(cdt, copy=False)
    axes = tuple(range(axis, len(shape)))
    stat_shape = shape[:axis] + (1,) * (len(shape) - axis)
    if x.size == 0:
        empty = np.zeros(stat_shape, cdt)
        return _out(x.copy(), dt), _out(empty, pdt), _out(empty, pdt)
    mean = x.mean(axis=axes, keepdims=True)
    xc = x - mean
    var = (xc * xc).mean(axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(var + cdt.type(eps))
    y = xc * rstd
    if weight is not None:
        y *= _arr(weight, cdt)
    if bias is not None:
        y += _arr(bias, cdt)
    return _out(y, dt), _out(mean, pdt), _out(rstd, pdt)


@TABLE.impl("aten::native_layer_norm_backward")
def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    shape = input._data.shape
    axis = len(shape) - len(normalized_shape)
    dt = input._dtype
    cdt = _cdt(dt)
    x = input._data.astype(cdt, copy=False)
    g = grad_out._data.astype(cdt, copy=False)
    axes = tuple(range(axis, len(shape)))
    lead = tuple(range(axis))
    xhat = (x - mean._data.astype(cdt)) * rstd._data.astype(cdt)
    gi = gw = gb = None
    if output_mask[0]:
        gx = g * _arr(weight, cdt) if weight is not None else g
        if x.size:
            m1 = gx.mean(axis=axes, keepdims=True)
            m2 = (gx * xhat).mean(axis=axes, keepdims=True)
            dx = rstd._data.astype(cdt) * (gx - m1 - xhat * m2)
        else:
            dx = gx.copy()
        gi = _out(dx, dt)
    if output_mask[1] and weight is not None:
        gw = _out((g * xhat).sum(axis=lead), weight._dtype)
    if output_mask[2] and bias is not None:
        gb = _out(g.sum(axis=lead), bias._dtype)
    return gi, gw, gb


# ---- batch norm --------------------------------------------------------------------------------------------------
def _channel_shape(ndim: int) -> tuple[int, ...]:
    return (1, -1) + (1,) * (ndim - 2)


@TABLE.impl("aten::native_batch_norm")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    dt = input._dtype
    _check_floating("batch_norm", dt)
    pdt = _param_dtype(input, weight, bias, running_mean, running_var)
    cdt = _cdt(dt)
    x = input._data.astype(cdt, copy=False)
    nd = x.ndim
    if nd < 2:
        raise RuntimeError(f"batch_norm: Expected at least 2 dimensions for input, got {nd}")
    cs = _channel_shape(nd)
    axes = (0,) + tuple(range(2, nd))
    c = x.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and t._data.size != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t._data.size}")
    if training:
        n = x.size // c if c else 0
        mean = x.mean(axis=axes)
        xc = x - mean.reshape(cs)
        var = (xc * xc).mean(axis=axes)
        invstd = 1.0 / np.sqrt(var + cdt.type(eps))
        if running_mean is not None:
            rm = running_mean._data
            rm[...] = (momentum * mean + (1 - momentum) * rm.astype(cdt)).astype(rm.dtype)
        if running_var is not None:
            rv = running_var._data
            tok = C.quiet()
            try:
                unbiased = (var * n) / (n - 1)  # 0/0 = nan for one value per channel, as in PyTorch
            finally:
                C.loud(tok)
            rv[...] = (momentum * unbiased + (1 - momentum) * rv.astype(cdt)).astype(rv.dtype)
        y = xc * invstd.reshape(cs)
        save_mean, save_invstd = _out(mean, pdt), _out(invstd, pdt)
    else:
        mean = running_mean._data.astype(cdt)
        invstd = 1.0 / np.sqrt(running_var._data.astype(cdt) + cdt.type(eps))
        y = (x - mean.reshape(cs)) * invstd.reshape(cs)
        save_mean, save_invstd = _out(np.zeros(0, cdt), pdt), _out(np.zeros(0, cdt), pdt)
    if weight is not None:
        y = y * _arr(weight, cdt).reshape(cs)
    if bias is not None:
        y = y + _arr(bias, cdt).reshape(cs)
    return _out(y, dt), save_mean, save_invstd


@TABLE.impl("aten::native_batch_norm_backward")
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train, eps,
                               output_mask):
    dt = input._dtype
    cdt = _cdt(dt)
    x = input._data.astype(cdt, copy=False)
    g = grad_out._data.astype(cdt, copy=False)
    nd = x.ndim
    cs = _channel_shape(nd)
    axes = (0,) + tuple(range(2, nd))
    if train:
        mean = save_mean._data.astype(cdt)
        invstd = save_invstd._data.astype(cdt)
    else:
        mean = running_mean._data.astype(cdt)
        invstd = 1.0 / np.sqrt(running_var._data.astype(cdt) + cdt.type(eps))
    xhat = (x - mean.reshape(cs)) * invstd.reshape(cs)
    w = _arr(weight, cdt) if weight is not None else np.ones(x.shape[1], cdt)
    gi = gw = gb = None
    if output_mask[0]:
        if train and x.size:
            gm = g.mean(axis=axes, keepdims=True)
            gxm = (g * xhat).mean(axis=axes, keepdims=True)
            dx = (g - gm - xhat * gxm) * (invstd * w).reshape(cs)
        else:
            dx = g * (invstd * w).reshape(cs)
        gi = _out(dx, dt)
    if output_mask[1]:
        gw = _out((g * xhat).sum(axis=axes), weight._dtype if weight is not None else _param_dtype(input, running_mean))
    if output_mask[2]:
        gb = _out(g.sum(axis=axes), weight._dtype if weight is not None else _param_dtype(input, running_mean))
    return gi, gw, gb


# ---- group norm ---------------------------------------------------------------------------------------------------
@TABLE.impl("aten::native_group_norm")
def native_group_norm(input, weight, bias, N, C_, HxW, group, eps):
    dt = input._dtype
    _check_floating("GroupNormKernelImpl", dt)
    pdt = _param_dtype(input, weight, bias)
    cdt = _cdt(dt)
    x = input._data.astype(cdt, copy=False)
    if x.size != N * C_ * HxW:
        raise RuntimeError(f"Expected X.numel() == N * C * HxW to be true, but got X.numel() = {x.size}, N = {N}, "
                           f"C = {C_}, HxW = {HxW}")
    if group <= 0 or C_ % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {S.fmt_sizes(x.shape)} and num_groups={group}")
    xg = x.reshape(N, group, -1)
    if xg.shape[-1] == 0:
        mean = np.zeros((N, group), cdt)
        rstd = np.full((N, group), np.inf, cdt)
        return _out(x.copy(), dt), _out(mean, pdt), _out(rstd, pdt)
    mean = xg.mean(axis=-1)
    xc = xg - mean[..., None]
    var = (xc * xc).mean(axis=-1)
    rstd = 1.0 / np.sqrt(var + cdt.type(eps))
    y = (xc * rstd[..., None]).reshape(N, C_, -1)
    if weight is not None:
        y = y * _arr(weight, cdt)[None, :, None]
    if bias is not None:
        y = y + _arr(bias, cdt)[None, :, None]
    return _out(y.reshape(x.shape), dt), _out(mean, pdt), _out(rstd, pdt)


@TABLE.impl("aten::native_group_norm_backward")
def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C_, HxW, group, output_mask):
    dt = input._dtype
    cdt = _cdt(dt)
    x = input._data.astype(cdt, copy=False).reshape(N, C_, -1)
    g = grad_out._data.astype(cdt, copy=False).reshape(N, C_, -1)
    m = mean._data.astype(cdt).reshape(N, group, 1)
    r = rstd._data.astype(cdt).reshape(N, group, 1)
    xhat = ((x.reshape(N, group, -1) - m) * r).reshape(N, C_, -1)
    gi = gw = gb = None
    if output_mask[0]:
        gx = g * _arr(weight, cdt)[None, :, None] if weight is not None else g
        gxg = gx.reshape(N, group, -1)
        xh = xhat.reshape(N, group, -1)
        if gxg.shape[-1]:
            dx = r * (gxg - gxg.mean(-1, keepdims=True) - xh * (gxg * xh).mean(-1, keepdims=True))
        else:
            dx = gxg
        gi = _out(dx.reshape(input._data.shape), dt)
    if output_mask[1] and weight is not None:
        gw = _out((g * xhat).sum(axis=(0, 2)), weight._dtype)
    if output_mask[2]:
        gb = _out(g.sum(axis=(0, 2)), weight._dtype if weight is not None else _param_dtype(input))
    return gi, gw, gb


# ---- dropout ------------------------------------------------------------------------------------------------------
@TABLE.impl("aten::native_dropout")
def native_dropout(input, p, train):
    x = input._data
    if x.size == 0:
        return input, fresh(np.empty(x.shape, x.dtype))
    if train is None or train:
        p1m = 1.0 - p
        scale = 0.0 if p1m == 0 else 1.0 / p1m
        # mask = empty_like(input).bernoulli_(p1m), as native_dropout_cpu (contiguous order)
        mask = np.asarray(_stream.fill(None, _stream.BERNOULLI, x.size, p1m).reshape(x.shape).astype(bool))
        dt = input._dtype
        cdt = _cdt(dt)
        out = (x.astype(cdt, copy=False) * mask) * cdt.type(scale)
        return _out(out, dt), fresh(mask)
    return fresh(x.copy()), fresh(np.ones(x.shape, bool))


@TABLE.impl("aten::native_dropout_backward")
def native_dropout_backward(grad_output, mask, scale):
    dt = grad_output._dtype
    cdt = _cdt(dt)
    g = grad_output._data.astype(cdt, copy=False)
    return _out(g * mask._data * cdt.type(scale), dt)


_ = math
