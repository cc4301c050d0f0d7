"""cpu kernels: nll_loss (1d/2d targets, class weights, ignore_index) and binary_cross_entropy, with backward ops."""

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


def _cdt(dt) -> np.dtype:
    return _F32 if dt in HALF else dt.numpy_dtype


def _out(arr, dt) -> Tensor:
    arr = np.asarray(arr)  # (np.ascontiguousarray would make 0-dim results 1-dim)
    if not arr.flags.c_contiguous:
        arr = arr.copy()
    return fresh(arr.astype(dt.numpy_dtype, copy=False))


# ---- nll_loss ------------------------------------------------------------------------------------------------------
def _nll_checks(name: str, self: Tensor, target: Tensor, weight: Tensor | None) -> None:
    shape, t_shape = self._data.shape, target._data.shape
    if name == "nll_loss":
        if not 1 <= len(shape) <= 2:
            raise RuntimeError("input tensor should be 1D or 2D")
        if len(t_shape) > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        no_batch = len(shape) == 1 and len(t_shape) == 0
        if len(shape) == 1 and len(t_shape) == 1:  # one sample with its target as a 1-element vector
            if t_shape[0] != 1:
                raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {t_shape[0]}")
        elif not no_batch and (len(t_shape) == 0 or shape[0] != t_shape[0]):
            raise RuntimeError(f"size mismatch (got input: {S.fmt_sizes(shape)}, target: {S.fmt_sizes(t_shape)})")
        classes = shape[-1]
        if weight is not None and (weight._data.ndim != 1 or weight._data.size != classes):
            raise RuntimeError(
                f"weight tensor should be defined either for all {classes} classes or no classes but got weight "
                f"tensor of shape: {S.fmt_sizes(weight._data.shape)}"
            )
    else:
        if len(t_shape) != 3:
            raise RuntimeError(
                f"only batches of spatial targets supported (3D tensors) but got targets of dimension: {len(t_shape)}"
            )
        if len(shape) != 4:
            raise RuntimeError(
                f"only batches of spatial inputs supported (4D tensors), but got input of dimension: {len(shape)}"
            )
        if weight is not None and weight._data.size != shape[1]:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        if shape[0] != t_shape[0] or shape[2] != t_shape[1] or shape[3] != t_shape[2]:
            raise RuntimeError(f"size mismatch (got input: {S.fmt_sizes(shape)} , target: {S.fmt_sizes(t_shape)}")
    if target._dtype not in (D.int64, D.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {C.torch_name(target._dtype)}")
    if self._dtype not in C.FLOATING:
        raise C.not_implemented(f"{name}_out_frame", self._dtype)


def _class_last(x: np.ndarray) -> np.ndarray:
    """(N, C, *sp) -> (N*prod(sp), C); (C,) -> (1, C); (N, C) unchanged."""
    if x.ndim == 1:
        return x[None]
    if x.ndim == 2:
        return x
    return np.moveaxis(x, 1, -1).reshape(-1, x.shape[1])


def _gather(self: Tensor, target: Tensor, weight: Tensor | None, ignore_index: int, cdt):
    x = _class_last(self._data.astype(cdt, copy=False))
    t = target._data.reshape(-1).astype(np.int64, copy=False)
    classes = x.shape[1]
    valid = t != ignore_index
    bad = valid & ((t < 0) | (t >= classes))
    if bad.any():
        raise IndexError(f"Target {int(t[bad][0])} is out of bounds.")
    safe = np.where(valid, t, 0)
    w = weight._data.astype(cdt, copy=False)[safe] if weight is not None else np.ones(t.shape, cdt)
    w = np.where(valid, w, cdt.type(0))
    picked = x[np.arange(x.shape[0]), safe] if x.shape[0] else np.zeros(0, cdt)
    # An ignored target contributes exactly 0, as in PyTorch, whatever its row holds: (-inf) * 0
    # would be NaN, and masking logits with -inf is common.
    picked = np.where(valid, picked, cdt.type(0))
    return picked, w, safe, valid


_PLAIN = (D.float32, D.float64)
_I64 = np.dtype(np.int64)


def _nll_in_c(reduction, weight, x: np.ndarray, t: np.ndarray, dt, ignore_index) -> bool:
    """Whether the C kernels take this nll_loss: reduced, unweighted, a (N, C) float32/float64 input
    and int64 targets (the training hot path)."""
    return (C.ckernels is not None and reduction and weight is None and x.ndim == 2 and dt in _PLAIN
            and t.dtype == _I64 and t.ndim == 1 and -(1 << 63) <= ignore_index < (1 << 63))


def _nll_forward(name, self, target, weight, reduction, ignore_index):
    _nll_checks(name, self, target, weight)
    if name == "nll_loss2d" and target._dtype is not D.int64:  # its kernel reads int64 targets only (no Byte)
        raise RuntimeError(f"expected scalar type Long but found {C.torch_name(target._dtype)}")
    dt = self._dtype
    x, t = self._data, target._data
    if _nll_in_c(reduction, weight, x, t, dt, ignore_index):
        npdt = dt.numpy_dtype
        total, count = C.ckernels.nll(np.ascontiguousarray(x), np.ascontiguousarray(t), npdt.itemsize == 8,
                                      x.shape[0], x.shape[1], ignore_index)
        if reduction == 1:
            total = total / count if count else math.nan  # every target ignored: 0/0, as in PyTorch
        return fresh(np.asarray(total, npdt)), fresh(np.asarray(count, npdt))
    if reduction and weight is None and x.ndim == 2 and dt in _PLAIN and t.size:
        # The training hot path (cross_entropy on a batch): every target valid, none ignored.
        lo, hi = t.min(), t.max()
        n, c = x.shape
        if lo >= 0 and hi < c and not lo <= ignore_index <= hi:
            total = -x[np.arange(n), t].sum()
            npdt = dt.numpy_dtype
            if reduction == 1:
                total = total / npdt.type(n)
            return fresh(np.asarray(total, npdt)), fresh(np.asarray(n, npdt))
    cdt = _cdt(dt)
    picked, w, _, valid = _gather(self, target, weight, ignore_index, cdt)
    losses = np.where(valid, -(picked * w), cdt.type(0))  # an ignored target's loss is +0, as in PyTorch
    if reduction == 0:
        out_shape = self._data.shape[:1] if name == "nll_loss" and self._data.ndim == 2 else (
            target._data.shape if name != "nll_loss" else ())
        return _out(losses.reshape(out_shape), dt), _out(np.zeros((), cdt), dt)
    total_w = w.sum(dtype=cdt)
    total = losses.sum(dtype=cdt)
    if reduction == 1:
        tok = C.quiet()
        try:
            total = total / total_w
        finally:
            C.loud(tok)
    return _out(total, dt), _out(total_w, dt)


def _nll_backward_checks(name, grad_output, self, target, weight, reduction, total_weight) -> None:
    """PyTorch's checks of nll_loss_backward / nll_loss2d_backward (its meta functions, then the kernel's)."""
    shape, t_shape, g_shape = self._data.shape, target._data.shape, grad_output._data.shape
    if name == "nll_loss":
        if not 1 <= len(shape) <= 2:
            raise RuntimeError("input tensor should be 1D or 2D")
        if len(t_shape) > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if not (len(shape) == 1 and len(t_shape) == 0) and (len(t_shape) == 0 or shape[0] != t_shape[0]):
            raise RuntimeError(f"size mismatch (got input: {S.fmt_sizes(shape)}, target: {S.fmt_sizes(t_shape)})")
    else:
        _nll_checks(name, self, target, None)
    if total_weight._data.size != 1:
        sep = "  " if name == "nll_loss" else " "  # sic: nll_loss_backward's message has two spaces
        raise RuntimeError(f"expected total_weight to be a{sep}single element tensor, got: "
                           f"{S.fmt_sizes(total_weight._data.shape)} ({total_weight._data.size} elements)")
    if weight is not None and weight._data.size != shape[-1 if name == "nll_loss" else 1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if reduction == 0 and name == "nll_loss2d":
        if g_shape != t_shape:
            raise RuntimeError(f"size mismatch (got grad_output: {S.fmt_sizes(g_shape)} target: {S.fmt_sizes(t_shape)}")
    elif reduction == 0 and len(shape) == 2:
        n = len(g_shape)
        if n != 1 or g_shape[0] != shape[0]:
            raise RuntimeError(f"Expected a tensor of dimension 1 and tensor.size[0] == {shape[0]} but got: dimension "
                               f"{n} and tensor.size[0] = {g_shape[S.wrap_dim(0, n)]}")
    elif len(g_shape) > 1 or grad_output._data.size != 1:
        raise RuntimeError(f"Expected a single element grad_output tensor, but got: {S.fmt_sizes(g_shape)}")
    if target._dtype not in (D.int64, D.uint8):
        raise RuntimeError(f"expected scalar type Long but found {C.torch_name(target._dtype)}")


def _nll_backward(name, grad_output, self, target, weight, reduction, ignore_index, total_weight):
    _nll_backward_checks(name, grad_output, self, target, weight, reduction, total_weight)
    dt = self._dtype
    x, t = self._data, target._data
    if _nll_in_c(reduction, weight, x, t, dt, ignore_index) and grad_output._data.size == 1:
        npdt = dt.numpy_dtype
        coef = -grad_output._data.astype(npdt, copy=False).reshape(())
        if reduction == 1:
            tok = C.quiet()  # every target ignored: nothing is written, the 0 divisor does not matter
            try:
                coef = coef / total_weight._data.astype(npdt)
            finally:
                C.loud(tok)
        gi = np.zeros(x.shape, npdt)
        C.ckernels.nll_backward(np.ascontiguousarray(t), gi, npdt.itemsize == 8, x.shape[0], x.shape[1],
                                ignore_index, float(coef))
        return fresh(gi)
    if reduction and weight is None and x.ndim == 2 and dt in _PLAIN and t.size:
        # The training hot path (mirrors _nll_forward's): every target valid, none ignored, so the
        # gradient is -g/n (mean) or -g (sum) at each row's target.
        lo, hi = t.min(), t.max()
        n, c = x.shape
        if lo >= 0 and hi < c and not lo <= ignore_index <= hi:
            npdt = dt.numpy_dtype
            coef = -grad_output._data.astype(npdt, copy=False).reshape(())
            if reduction == 1:
                coef = coef / total_weight._data.astype(npdt)
            gi = np.zeros((n, c), npdt)
            gi[np.arange(n), t] = coef
            return fresh(gi)
    cdt = _cdt(dt)
    _, w, safe, valid = _gather(self, target, weight, ignore_index, cdt)
    g = grad_output._data.astype(cdt, copy=False)
    if reduction == 0:
        coef = -w * g.reshape(-1)
    else:
        coef = -w * g.reshape(())
        if reduction == 1:
            tok = C.quiet()
            try:
                coef = coef / total_weight._data.astype(cdt)
            finally:
                C.loud(tok)
    x = self._data
    rows = _class_last(np.zeros(x.shape, cdt)) if x.ndim <= 2 else np.zeros((safe.size, x.shape[1]), cdt)
    if rows.shape[0]:
        rows[np.arange(rows.shape[0]), safe] = np.where(valid, coef, cdt.type(0))
    if x.ndim <= 2:
        gi = rows.reshape(x.shape)
    else:
        gi = np.moveaxis(rows.reshape((x.shape[0],) + x.shape[2:] + (x.shape[1],)), -1, 1)
    return _out(gi, dt)


@TABLE.impl("aten::nll_loss_forward")
def nll_loss_forward(self, target, weight, reduction, ignore_index):
    return _nll_forward("nll_loss", self, target, weight, reduction, ignore_index)


@TABLE.impl("aten::nll_loss2d_forward")
def nll_loss2d_forward(self, target, weight, reduction, ignore_index):
    return _nll_forward("nll_loss2d", self, target, weight, reduction, ignore_index)


@TABLE.impl("aten::nll_loss_backward")
def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    return _nll_backward("nll_loss", grad_output, self, target, weight, reduction, ignore_index, total_weight)


@TABLE.impl("aten::nll_loss2d_backward")
def nll_loss2d_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    return _nll_backward("nll_loss2d", grad_output, self, target, weight, reduction, ignore_index, total_weight)


# ---- binary cross entropy ---------------------------------------------------------------------------------------------
def _bce_operands(self, target, weight):
    dt = C.result_dtype(self, target)
    if dt not in C.FLOATING:
        raise C.not_implemented("binary_cross_entropy", dt)
    cdt = _cdt(dt)
    x = self._data.astype(cdt, copy=False)
    t = target._data.astype(cdt, copy=False)
    if x.shape != t.shape and x.size != t.size:
        raise C.broadcast_error(x.shape, t.shape)
    w = None if weight is None else weight._data.astype(cdt, copy=False)
    return dt, cdt, x, t, w


@TABLE.impl("aten::binary_cross_entropy")
def binary_cross_entropy(self, target, weight=None, reduction=1):
    dt, cdt, x, t, w = _bce_operands(self, target, weight)
    if ((x < 0) | (x > 1)).any():
        raise RuntimeError("all elements of input should be between 0 and 1")
    if ((t < 0) | (t > 1)).any():
        raise RuntimeError("all elements of target should be between 0 and 1")
    tok = C.quiet()
    try:
        loss = (t - 1) * np.maximum(np.log1p(-x), -100) - t * np.maximum(np.log(x), -100)
    finally:
        C.loud(tok)
    if w is not None:
        loss = loss * w
    if reduction == 1:
        loss = loss.mean(dtype=cdt) if loss.size else np.asarray(np.nan, cdt)
    elif reduction == 2:
        loss = loss.sum(dtype=cdt)
    return _out(loss, dt)


_BCE_EPSILON = float(np.float32(1e-12))  # ATen's `static const float EPSILON = 1e-12`, widened for double


@TABLE.impl("aten::binary_cross_entropy_backward")
def binary_cross_entropy_backward(grad_output, self, target, weight=None, reduction=1):
    dt, cdt, x, t, w = _bce_operands(self, target, weight)
    g = grad_output._data.astype(cdt, copy=False)
    gi = g * (x - t) / np.maximum((1 - x) * x, cdt.type(_BCE_EPSILON))
    if w is not None:
        gi = gi * w
    if reduction == 1 and x.size:
        gi = gi / cdt.type(x.size)
    return _out(np.broadcast_to(gi, x.shape), dt)
