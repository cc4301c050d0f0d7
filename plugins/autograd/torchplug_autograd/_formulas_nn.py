"""Derivative formulas of the neural-network section: each forward op calls its ``*_backward`` op, as
PyTorch's derivatives.yaml does (convolution, pooling, softmax, normalization, dropout, embedding,
activations, losses, padding, upsampling, im2col/col2im)."""

from __future__ import annotations

from typing import Any

import numpy as _np

import torchplug as T
from torchplug._dispatch.dispatcher import DISPATCHER

from ._rules import nondifferentiable, rule

__all__: list[str] = []

def _call(name: str) -> Any:
    return DISPATCHER.entry(f"aten::{name}").call


class _Aten:
    """``A.op(...)``: the entry point of ``aten::op`` itself (no Python wrapper, no overload lookup)."""

    def __getattr__(self, name: str) -> Any:
        fn = _call(name)
        setattr(self, name, fn)
        return fn


A = _Aten()


_threshold_backward = _call("threshold_backward")


# ---- linear / convolution ---------------------------------------------------------------------------
@rule("convolution", saves="input, weight, stride, padding, dilation, transposed, output_padding, groups",
      inputs="input, weight, bias")
def convolution(n, g, input, weight, stride, padding, dilation, transposed, output_padding, groups):
    mask = [bool(n[0]), bool(n[1]), bool(n[2])]
    bias_sizes = [weight.shape[1] * groups if transposed else weight.shape[0]] if n[2] else None
    gi, gw, gb = A.convolution_backward(g, input, weight, bias_sizes, stride, padding,
                                        dilation, transposed, output_padding, groups, mask)
    return n[0] and gi, n[1] and gw, n[2] and gb


@rule("im2col", saves="self.shape, kernel_size, dilation, padding, stride")
def im2col(n, g, shape, kernel_size, dilation, padding, stride):
    return (A.col2im(g, list(shape[-2:]), kernel_size, dilation, padding, stride),)


@rule("col2im", saves="kernel_size, dilation, padding, stride")
def col2im(n, g, kernel_size, dilation, padding, stride):
    return (A.im2col(g, kernel_size, dilation, padding, stride),)


# ---- pooling ---------------------------------------------------------------------------------------
@rule("max_pool2d_with_indices", saves="self, kernel_size, stride, padding, dilation, ceil_mode, result1",
      outputs=(0,))
def max_pool2d(n, g, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    return (A.max_pool2d_with_indices_backward(g[0], self, kernel_size, stride, padding, dilation, ceil_mode,
                                               indices),)


@rule("max_pool3d_with_indices", saves="self, kernel_size, stride, padding, dilation, ceil_mode, result1",
      outputs=(0,))
def max_pool3d(n, g, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
    return (A.max_pool3d_with_indices_backward(g[0], self, kernel_size, stride, padding, dilation, ceil_mode,
                                               indices),)


@rule("avg_pool2d", saves="self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override")
def avg_pool2d(n, g, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    return (A.avg_pool2d_backward(g, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                  divisor_override),)


@rule("avg_pool3d", saves="self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override")
def avg_pool3d(n, g, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    return (A.avg_pool3d_backward(g, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                  divisor_override),)


@rule("_adaptive_avg_pool2d", saves="self")
def adaptive_avg_pool2d(n, g, self):
    return (A._adaptive_avg_pool2d_backward(g, self),)


@rule("adaptive_max_pool2d", saves="self, result1", outputs=(0,))
def adaptive_max_pool2d(n, g, self, indices):
    return (A.adaptive_max_pool2d_backward(g[0], self, indices),)


# ---- softmax ---------------------------------------------------------------------------------------
@rule("_softmax", saves="self.dtype, dim, result")
def softmax(n, g, dtype, dim, result):
    return (A._softmax_backward_data(g, result, dim, dtype),)


@rule("_safe_softmax", saves="self.dtype, dim, result")
def safe_softmax(n, g, dtype, dim, result):
    # derivatives.yaml: softmax's (the fully masked rows' zeros make their gradient zero)
    return (A._softmax_backward_data(g, result, dim, dtype),)


@rule("_log_softmax", saves="self.dtype, dim, result")
def log_softmax(n, g, dtype, dim, result):
    return (A._log_softmax_backward_data(g, result, dim, dtype),)


# ---- normalization ---------------------------------------------------------------------------------
@rule("native_layer_norm", saves="input, normalized_shape, weight, bias, result1, result2", outputs=(0,),
      inputs="input, weight, bias")
def layer_norm(n, g, input, normalized_shape, weight, bias, mean, rstd):
    mask = [bool(n[0]), bool(n[1]), bool(n[2])]
    gi, gw, gb = A.native_layer_norm_backward(g[0], input, normalized_shape, mean, rstd, weight, bias, mask)
    return n[0] and gi, n[1] and gw, n[2] and gb


@rule("native_batch_norm", saves="input, weight, running_mean, running_var, training, eps, result1, result2",
      outputs=(0,), inputs="input, weight, bias")
def batch_norm(n, g, input, weight, running_mean, running_var, training, eps, save_mean, save_invstd):
    mask = [bool(n[0]), bool(n[1]), bool(n[2])]
    gi, gw, gb = A.native_batch_norm_backward(g[0], input, weight, running_mean, running_var, save_mean,
                                              save_invstd, training, eps, mask)
    return n[0] and gi, n[1] and gw, n[2] and gb


@rule("native_group_norm", saves="input, weight, N, C, HxW, group, result1, result2", outputs=(0,),
      inputs="input, weight, bias")
def group_norm(n, g, input, weight, N, C, HxW, group, mean, rstd):
    mask = [bool(n[0]), bool(n[1]), bool(n[2])]
    gi, gw, gb = A.native_group_norm_backward(g[0], input, mean, rstd, weight, N, C, HxW, group, mask)
    return n[0] and gi, n[1] and gw, n[2] and gb


# ---- dropout and embedding ---------------------------------------------------------------------------
@rule("native_dropout", saves="p, train, result1", outputs=(0,), inputs="input")
def native_dropout(n, g, p, train, mask):
    scale = 1.0 if not train else (0.0 if p == 1 else 1.0 / (1.0 - p))
    return (A.native_dropout_backward(g[0], mask, scale),)


@rule("embedding", saves="weight.shape, indices, padding_idx, scale_grad_by_freq", inputs="weight")
def embedding(n, g, shape, indices, padding_idx, scale_grad_by_freq):
    return (A.embedding_dense_backward(g, indices, shape[0], padding_idx, scale_grad_by_freq),)


# ---- activations -----------------------------------------------------------------------------------
@rule("relu", saves="result")
def relu(n, g, result):
    return (_threshold_backward(g, result, 0),)


@rule("threshold", saves="self, threshold")
def threshold(n, g, self, threshold):
    return (_threshold_backward(g, self, threshold),)


@rule("threshold_backward", saves="self, threshold", inputs="grad_output, self")
def threshold_backward(n, g, self, threshold):
    return n[0] and _threshold_backward(g, self, threshold), n[1] and T.zeros_like(g)


@rule("gelu", saves="self, approximate")
def gelu(n, g, self, approximate):
    return (A.gelu_backward(g, self, approximate=approximate),)


@rule("silu", saves="self")
def silu(n, g, self):
    return (A.silu_backward(g, self),)


@rule("elu", saves="self, alpha, scale, input_scale")
def elu(n, g, self, alpha, scale, input_scale):
    return (A.elu_backward(g, alpha, scale, input_scale, False, self),)


@rule("leaky_relu", saves="self, negative_slope")
def leaky_relu(n, g, self, negative_slope):
    return (A.leaky_relu_backward(g, self, negative_slope, False),)


@rule("hardtanh", saves="self, min_val, max_val")
def hardtanh(n, g, self, min_val, max_val):
    return (A.hardtanh_backward(g, self, min_val, max_val),)


@rule("softplus", saves="self, beta, threshold")
def softplus(n, g, self, beta, threshold):
    return (A.softplus_backward(g, self, beta, threshold),)


@rule("mish", saves="self")
def mish(n, g, self):
    return (A.mish_backward(g, self),)


@rule("hardswish", saves="self")
def hardswish(n, g, self):
    return (A.hardswish_backward(g, self),)


@rule("hardsigmoid", saves="self")
def hardsigmoid(n, g, self):
    return (A.hardsigmoid_backward(g, self),)


@rule("log_sigmoid_forward", saves="self, result1", outputs=(0,))
def log_sigmoid(n, g, self, buffer):
    return (A.log_sigmoid_backward(g[0], self, buffer),)


@rule("hardshrink", saves="self, lambd")
def hardshrink(n, g, self, lambd):
    return (A.hardshrink_backward(g, self, lambd),)


@rule("softshrink", saves="self, lambd")
def softshrink(n, g, self, lambd):
    return (A.softshrink_backward(g, self, lambd),)


@rule("_prelu_kernel", saves="self, weight")
def prelu(n, g, self, weight):
    gs, gw = A._prelu_kernel_backward(g, self, weight)
    return n[0] and gs, n[1] and gw


@rule("glu", saves="self, dim")
def glu(n, g, self, dim):
    return (A.glu_backward(g, self, dim),)


# ---- losses -----------------------------------------------------------------------------------------
@rule("nll_loss_forward", saves="self, target, weight, reduction, ignore_index, result1", outputs=(0,), inputs="self",
      refuse="weight")
def nll_loss(n, g, self, target, weight, reduction, ignore_index, total_weight):
    return (A.nll_loss_backward(g[0], self, target, weight, reduction, ignore_index, total_weight),)


@rule("nll_loss2d_forward", saves="self, target, weight, reduction, ignore_index, result1", outputs=(0,),
      inputs="self", refuse="weight")
def nll_loss2d(n, g, self, target, weight, reduction, ignore_index, total_weight):
    return (A.nll_loss2d_backward(g[0], self, target, weight, reduction, ignore_index, total_weight),)


@rule("binary_cross_entropy", saves="self, target, weight, reduction", inputs="self, target", refuse="weight")
def binary_cross_entropy(n, g, self, target, weight, reduction):
    gs = n[0] and A.binary_cross_entropy_backward(g, self, target, weight, reduction)
    gt = False
    if n[1]:
        gt = -T.logit(self) * g
        if weight is not None:
            gt = gt * weight
        if reduction == 1:  # Mean
            gt = gt / target.numel()
    return gs, gt


_sub, _mul, _add, _div = _call("sub.Tensor"), _call("mul"), _call("add.Tensor"), _call("div.Tensor")


def _loss_scale(g: Any, scale: float) -> Any:
    return _mul(g, scale) if scale != 1.0 else g


def _loss_diff(self: Any, target: Any) -> Any:
    """self - target as the loss backward kernels compute it: in the common dtype (a bool target too)."""
    if target.dtype is T.bool:
        target = A._to_copy(target, dtype=self.dtype)
    return _sub(self, target)


def _per_element(c: float, numel: int) -> float:
    """``c / numel`` as the C++ backward divides a double: inf for no element (the gradient is empty anyway)."""
    return c / numel if numel else float("inf")


@rule("mse_loss", saves="self, target, reduction")
def mse_loss(n, g, self, target, reduction):
    # PyTorch's mse_loss_backward: (self - target) * (2 / N * grad); the target's gradient is its negation
    d = _loss_diff(self, target)
    gs = _mul(d, _loss_scale(g, _per_element(2.0, d.numel()) if reduction == 1 else 2.0))
    return n[0] and gs, n[1] and A.neg(gs)


@rule("smooth_l1_loss", saves="self, target, reduction, beta")
def smooth_l1_loss(n, g, self, target, reduction, beta):
    # x / beta inside [-beta, beta], its sign outside (smooth_l1_loss_backward)
    d = _loss_diff(self, target)
    slope = A.sign(d) if beta == 0 else A.clamp(_div(d, beta), -1, 1)
    gs = _mul(slope, _loss_scale(g, _per_element(1.0, d.numel()) if reduction == 1 else 1.0))
    return n[0] and gs, n[1] and A.neg(gs)


@rule("huber_loss", saves="self, target, reduction, delta")
def huber_loss(n, g, self, target, reduction, delta):
    # x inside [-delta, delta], delta * sign(x) outside (huber_loss_backward)
    d = _loss_diff(self, target)
    gs = _mul(A.clamp(d, -delta, delta), _loss_scale(g, _per_element(1.0, d.numel()) if reduction == 1 else 1.0))
    return n[0] and gs, n[1] and A.neg(gs)


@rule("binary_cross_entropy_with_logits", saves="self, target, weight, pos_weight, reduction", inputs="self, target",
      refuse="weight, pos_weight")
def binary_cross_entropy_with_logits(n, g, self, target, weight, pos_weight, reduction):
    # binary_cross_entropy_with_logits_backward and ..._target_backward of PyTorch's derivatives.yaml
    scale = _per_element(1.0, self.numel()) if reduction == 1 else 1.0
    gw = _loss_scale(g, scale)
    if weight is not None:
        gw = _mul(gw, weight)
    gs = gt = False
    if n[0]:
        if pos_weight is None:
            gs = _mul(_sub(A.sigmoid(self), target), gw)
        else:
            t = _mul(pos_weight, target)
            gs = _mul(_sub(_mul(_sub(_add(t, 1), target), A.sigmoid(self)), t), gw)
    if n[1]:
        if pos_weight is None:
            gt = _mul(A.neg(self), gw)
        else:
            ls_neg = A.log_sigmoid_forward(A.neg(self))[0]
            gt = _mul(_sub(ls_neg, _mul(A.log_sigmoid_forward(self)[0], pos_weight)), gw)
    return gs, gt


@rule("celu", saves="self, alpha")
def celu(n, g, self, alpha):
    # PyTorch's formula takes 1.0 / alpha.toFloat(): alpha rounded to float32 first
    return (A.elu_backward(g, alpha, 1.0, 1.0 / float(_np.float32(alpha)), False, self),)


# ---- padding and upsampling ---------------------------------------------------------------------------
@rule("constant_pad_nd", saves="pad")
def constant_pad_nd(n, g, pad):
    return (A.constant_pad_nd(g, [-p for p in pad], 0),)


def _pad_rule(name: str) -> None:
    backward = _call(f"{name}_backward")

    @rule(name, saves="self, padding")
    def pad(n, g, self, padding):
        return (backward(g, self, padding),)


for _mode in ("reflection", "replication"):
    for _n in (1, 2, 3):
        _pad_rule(f"{_mode}_pad{_n}d")


def _upsample_rule(name: str, scales: str, align: bool) -> None:
    backward = _call(f"{name}_backward")
    extra = "align_corners, " if align else ""

    @rule(name, saves=f"self.shape, output_size, {extra}{scales}")
    def upsample(n, g, input_size, output_size, *rest):
        return (backward(g, output_size, list(input_size), *rest),)


_SCALES = {1: "scales", 2: "scales_h, scales_w", 3: "scales_d, scales_h, scales_w"}
for _n in (1, 2, 3):
    _upsample_rule(f"upsample_nearest{_n}d", _SCALES[_n], False)
    _upsample_rule(f"_upsample_nearest_exact{_n}d", _SCALES[_n], False)
for _n, _m in ((1, "linear"), (2, "bilinear"), (3, "trilinear")):
    _upsample_rule(f"upsample_{_m}{_n}d", _SCALES[_n], True)


# ---- not differentiable -------------------------------------------------------------------------------
nondifferentiable("one_hot")


def _unpool_grad(dims: int):
    def formula(n, g, indices):
        # max_pool_double_backward: the gradient read back at each value's position in its output plane
        lead = list(indices.shape[: indices.dim() - dims])
        picked = g.flatten(-dims).gather(-1, indices.reshape(lead + [-1]))
        return (picked.view(indices.shape),)

    return formula


rule("max_unpool2d", saves="indices", inputs="self")(_unpool_grad(2))
rule("max_unpool3d", saves="indices", inputs="self")(_unpool_grad(3))
