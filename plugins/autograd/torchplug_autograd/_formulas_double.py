"""Derivative formulas of the NN ``*_backward`` ops, for higher-order gradients (``create_graph``).

Most backward ops are linear in their incoming gradient and piecewise constant in ``self``
(pooling, padding, upsampling, losses, piecewise-linear activations): the gradient w.r.t. the
incoming gradient is the adjoint of the op — the op itself for elementwise ones, the forward op
for pooling, padding, upsampling and nll — and ``self`` gets zeros, as in PyTorch's
derivatives.yaml.  Smooth activations differentiate ``self`` through ``f''``; the softmax
family through the closed forms below.
"""

from __future__ import annotations

import math
from typing import Any

import torchplug as T
from torchplug._dispatch.dispatcher import DISPATCHER

from ._norm_grads import normalized_grads as _normalized_grads
from ._rules import rule

__all__: list[str] = []

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_K = math.sqrt(2.0 / math.pi)  # gelu's tanh approximation: tanh(_K * (x + _C * x^3))
_C = 0.044715

# Elementwise backward ops g * f'(x) with f'' = 0 almost everywhere: the op is its own adjoint in g.
_ELEMENTWISE = (
    "hardtanh_backward", "leaky_relu_backward", "hardshrink_backward", "softshrink_backward",
    "hardsigmoid_backward", "native_dropout_backward",
)
# Backward ops of linear forward ops (pooling, padding, upsampling, nll): the gradient w.r.t. their
# incoming gradient is the forward op applied to the new gradient (the adjoint of the adjoint).
_ADJOINT_OF = {
    "avg_pool2d_backward": "avg_pool2d", "avg_pool3d_backward": "avg_pool3d",
    "reflection_pad1d_backward": "reflection_pad1d", "reflection_pad2d_backward": "reflection_pad2d",
    "reflection_pad3d_backward": "reflection_pad3d", "replication_pad1d_backward": "replication_pad1d",
    "replication_pad2d_backward": "replication_pad2d", "replication_pad3d_backward": "replication_pad3d",
    "upsample_nearest1d_backward": "upsample_nearest1d", "upsample_nearest2d_backward": "upsample_nearest2d",
    "upsample_nearest3d_backward": "upsample_nearest3d",
    "_upsample_nearest_exact1d_backward": "_upsample_nearest_exact1d",
    "_upsample_nearest_exact2d_backward": "_upsample_nearest_exact2d",
    "_upsample_nearest_exact3d_backward": "_upsample_nearest_exact3d",
    "upsample_linear1d_backward": "upsample_linear1d", "upsample_bilinear2d_backward": "upsample_bilinear2d",
    "upsample_trilinear3d_backward": "upsample_trilinear3d",
    "nll_loss_backward": "nll_loss_forward", "nll_loss2d_backward": "nll_loss2d_forward",
}


def _schema_names(op: str) -> list[str]:
    return [a.name for a in DISPATCHER.find(f"aten::{op}").schema.arguments]


def _with_self_zeros(op: str, rest: list[str], grad_of_grad: Any) -> None:
    """Register ``op``'s rule: ``grad_of_grad(new_grad, saved)`` for its first input; ``self`` (if an
    argument) gets zeros (piecewise constant in ``self``), everything else (indices, targets,
    masks, weights, sizes) none — as PyTorch's derivatives.yaml."""
    has_self = "self" in rest
    first = _schema_names(op)[0]

    def formula(n: Any, g: Any, *saved: Any) -> tuple[Any, ...]:
        grad = n[0] and grad_of_grad(g, saved)
        if not has_self:
            return (grad,)
        return grad, n[1] and T.zeros_like(saved[rest.index("self")])

    formula.__name__ = f"{op}_backward"
    rule(op, saves=", ".join(rest), inputs=first + (", self" if has_self else ""))(formula)


def _elementwise_rule(op: str) -> None:
    call = DISPATCHER.entry(f"aten::{op}").call
    _with_self_zeros(op, _schema_names(op)[1:], lambda g, saved: call(g, *saved))


def _adjoint_rule(op: str, forward: str) -> None:
    rest = _schema_names(op)[1:]
    picks = [rest.index(name) for name in _schema_names(forward)[1:]]  # the forward's arguments, by name
    call = DISPATCHER.entry(f"aten::{forward}").call
    multi = len(DISPATCHER.find(f"aten::{forward}").schema.returns) > 1  # nll_loss_forward: (output, total_weight)

    def grad_of_grad(g: Any, saved: tuple[Any, ...]) -> Any:
        out = call(g, *(saved[i] for i in picks))
        return out[0] if multi else out

    _with_self_zeros(op, rest, grad_of_grad)


for _op in _ELEMENTWISE:
    _elementwise_rule(_op)
for _op, _forward in _ADJOINT_OF.items():
    _adjoint_rule(_op, _forward)


def _gather_at(g: Any, indices: Any, dims: int) -> Any:
    """``g``'s values at the flat per-plane ``indices`` of a max pooling (its forward selection)."""
    flat = g.flatten(start_dim=g.dim() - dims)
    return flat.gather(-1, indices.flatten(start_dim=indices.dim() - dims)).view(list(indices.shape))


def _max_gather_rule(op: str, dims: int) -> None:
    """A max pooling's backward scatters to the argmax positions: its adjoint gathers from them."""

    def formula(n: Any, g: Any, self: Any, indices: Any) -> tuple[Any, ...]:
        return n[0] and _gather_at(g, indices, dims), n[1] and T.zeros_like(self)

    formula.__name__ = f"{op}_backward"
    rule(op, saves="self, indices", inputs="grad_output, self")(formula)


for _op, _dims in (("max_pool2d_with_indices_backward", 2), ("max_pool3d_with_indices_backward", 3),
                   ("adaptive_max_pool2d_backward", 2)):
    _max_gather_rule(_op, _dims)


_adaptive_avg_pool2d = DISPATCHER.entry("aten::_adaptive_avg_pool2d").call


@rule("_adaptive_avg_pool2d_backward", saves="self, grad_output.shape", inputs="grad_output, self")
def adaptive_avg_pool2d_backward(n, g, self, out_shape):
    return n[0] and _adaptive_avg_pool2d(g, list(out_shape[-2:])), n[1] and T.zeros_like(self)


# ---- smooth activations: act_backward(g, x) = g * f'(x), so d/dx = new_grad * g * f''(x) -----------------
_silu_backward = DISPATCHER.entry("aten::silu_backward").call
_gelu_backward = DISPATCHER.entry("aten::gelu_backward").call
_softplus_backward = DISPATCHER.entry("aten::softplus_backward").call
_log_sigmoid_backward = DISPATCHER.entry("aten::log_sigmoid_backward").call
_hardswish_backward = DISPATCHER.entry("aten::hardswish_backward").call


@rule("silu_backward", saves="grad_output, self", inputs="grad_output, self")
def silu_backward(n, gg, grad_output, self):
    s = self.sigmoid()
    return (n[0] and _silu_backward(gg, self),
            n[1] and gg * grad_output * s * (1 - s) * (2 + self * (1 - 2 * s)))


@rule("gelu_backward", saves="grad_output, self, approximate", inputs="grad_output, self")
def gelu_backward(n, gg, grad_output, self, approximate):
    if not n[1]:
        return _gelu_backward(gg, self, approximate=approximate), None
    if approximate == "tanh":
        x2 = self * self
        t = (_K * (self + _C * x2 * self)).tanh()
        du = _K * (1 + 3 * _C * x2)
        d2u = _K * 6 * _C * self
        second = (1 - t * t) * (du + 0.5 * self * (d2u - 2 * t * du * du))
    else:
        second = (-0.5 * self * self).exp() * _INV_SQRT_2PI * (2 - self * self)
    return n[0] and _gelu_backward(gg, self, approximate=approximate), gg * grad_output * second


@rule("softplus_backward", saves="grad_output, self, beta, threshold", inputs="grad_output, self")
def softplus_backward(n, gg, grad_output, self, beta, threshold):
    if not n[1]:
        return _softplus_backward(gg, self, beta, threshold), None
    s = (self * beta).sigmoid()
    second = T.where(self * beta > threshold, T.zeros_like(s), beta * s * (1 - s))
    return n[0] and _softplus_backward(gg, self, beta, threshold), gg * grad_output * second


@rule("log_sigmoid_backward", saves="grad_output, self, buffer", inputs="grad_output, self")
def log_sigmoid_backward(n, gg, grad_output, self, buffer):
    s = self.sigmoid()
    return n[0] and _log_sigmoid_backward(gg, self, buffer), n[1] and -(gg * grad_output * s * (1 - s))


@rule("hardswish_backward", saves="grad_output, self", inputs="grad_output, self")
def hardswish_backward(n, gg, grad_output, self):
    if not n[1]:
        return _hardswish_backward(gg, self), None
    inside = (self > -3.0) & (self < 3.0)
    second = T.where(inside, gg * grad_output / 3.0, T.zeros_like(self))
    return n[0] and _hardswish_backward(gg, self), second


_elu_backward = DISPATCHER.entry("aten::elu_backward").call


@rule("elu_backward", saves="grad_output, alpha, scale, input_scale, is_result, self_or_result",
      inputs="grad_output, self_or_result")
def elu_backward(n, gg, grad_output, alpha, scale, input_scale, is_result, self_or_result):
    # f'(x) = scale for x > 0, else input_scale * alpha * scale * exp(x * input_scale); when the saved
    # value is the result y, f' = input_scale * (y + alpha * scale) there, so d/dy = input_scale.
    grad_go = n[0] and _elu_backward(gg, alpha, scale, input_scale, is_result, self_or_result)
    grad_saved = None
    if n[1]:
        v = self_or_result
        if is_result:
            inner = gg * grad_output * input_scale
        else:
            inner = gg * grad_output * (input_scale * input_scale * alpha * scale) * (v * input_scale).exp()
        grad_saved = T.where(v > 0, T.zeros_like(v), inner)
    return grad_go, grad_saved


# ---- softmax family ---------------------------------------------------------------------------------------
_softmax_backward_data = DISPATCHER.entry("aten::_softmax_backward_data").call


@rule("_softmax_backward_data", saves="grad_output, output, dim, input_dtype", inputs="grad_output, output")
def softmax_backward_data(n, gg, grad_output, output, dim, input_dtype):
    # f = y * (go - sum(go * y)):  d/dgo is the same op on gg;  d/dy = gg * (go - s) - go * sum(gg * y)
    grad_go = n[0] and _softmax_backward_data(gg, output, dim, input_dtype)
    grad_y = None
    if n[1]:
        s = (grad_output * output).sum(dim, keepdim=True)
        grad_y = gg * (grad_output - s) - grad_output * (gg * output).sum(dim, keepdim=True)
    return grad_go, grad_y


@rule("_log_softmax_backward_data", saves="grad_output, output, dim, input_dtype", inputs="grad_output, output")
def log_softmax_backward_data(n, gg, grad_output, output, dim, input_dtype):
    # f = go - exp(y) * sum(go):  d/dgo = gg - sum(gg * exp(y));  d/dy = -gg * exp(y) * sum(go)
    p = output.exp()
    grad_go = n[0] and gg - (gg * p).sum(dim, keepdim=True)
    grad_y = n[1] and -(gg * p * grad_output.sum(dim, keepdim=True))
    return grad_go, grad_y


# ---- convolution ------------------------------------------------------------------------------------------
_convolution = DISPATCHER.entry("aten::convolution").call
_convolution_backward = DISPATCHER.entry("aten::convolution_backward").call


@rule("convolution_backward",
      saves="grad_output, input, weight, stride, padding, dilation, transposed, output_padding, groups",
      inputs="grad_output, input, weight")
def convolution_backward(n, gg, grad_output, input, weight, stride, padding, dilation, transposed, output_padding,
                         groups):
    # y = B(x, w) + b is bilinear in (x, w): its backward is gi = B_x^T(g; w), gw = B_w^T(g; x), gb = sum(g).
    # Hence d/dg = B(ggi, w) + B(x, ggw) + ggb,  d/dx = B_x^T(g; ggw),  d/dw = B_w^T(g; ggi) — the same
    # convolution ops with the same flags (transposed ones included).
    ggi, ggw, ggb = gg
    conf = (stride, padding, dilation, transposed, output_padding, groups)
    g_out = None
    if n[0]:
        if ggi is not None:
            g_out = _convolution(ggi, weight, None, *conf)
        if ggw is not None:
            part = _convolution(input, ggw, None, *conf)
            g_out = part if g_out is None else g_out + part
        if ggb is not None:
            part = ggb.reshape([1, -1] + [1] * (grad_output.dim() - 2)).expand(list(grad_output.shape))
            g_out = part if g_out is None else g_out + part
    g_in = None
    if n[1] and ggw is not None:
        g_in = _convolution_backward(grad_output, input, ggw, None, *conf, [True, False, False])[0]
    g_w = None
    if n[2] and ggi is not None:
        g_w = _convolution_backward(grad_output, ggi, weight, None, *conf, [False, True, False])[1]
    return g_out, g_in, g_w


# ---- normalization: differentiate a primitive re-expression of the backward ------------------------------
def _second_order(name, n, gg, grad_out, input, weight, build):
    """Gradients of <gg, backward(grad_out, input, weight)> through ``build(g, x, w)`` (the
    primitive re-expression), for the differentiable inputs ``n`` asks for."""
    from ._state import STATE
    from .autograd import enable_grad, grad

    if STATE.grad_enabled:  # create_graph inside a double backward: the re-expression is detached
        raise NotImplementedError(f"third-order derivatives through {name} are not supported; "
                                  "differentiate at most twice through this normalization")
    with enable_grad():
        g = grad_out.detach().requires_grad_(bool(n[0]))
        x = input.detach().requires_grad_(bool(n[1]))
        w = None if weight is None else weight.detach().requires_grad_(bool(n[2]))
        outs = build(g, x, w)
        pairs = [(o, c) for o, c in zip(outs, gg) if o is not None and c is not None]
        wanted = [t for t, need in ((g, n[0]), (x, n[1]), (w, n[2])) if need and t is not None]
        if not pairs or not wanted:
            return None, None, None
        found = list(grad([o for o, _ in pairs], wanted, [c for _, c in pairs], allow_unused=True))
    return tuple(found.pop(0) if need and t is not None else None for t, need in ((g, n[0]), (x, n[1]), (w, n[2])))


@rule("native_layer_norm_backward", saves="grad_out, input, normalized_shape, rstd, weight, output_mask",
      inputs="grad_out, input, weight")
def native_layer_norm_backward(n, gg, grad_out, input, normalized_shape, rstd, weight, output_mask):
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    # eps is not an argument of the backward op: recover it from the saved rstd (a constant here)
    xd = input.detach()
    var = ((xd - xd.mean(dims, keepdim=True)) ** 2).mean(dims, keepdim=True)
    eps = max((rstd.detach().reshape(var.shape) ** -2 - var).mean().item(), 0.0)
    lead = [1] * (input.dim() - len(normalized_shape))

    def build(g, x, w):
        return _normalized_grads(g, x, None if w is None else w.reshape(lead + list(w.shape)), dims, eps, output_mask)

    return _second_order("native_layer_norm_backward", n, gg, grad_out, input, weight, build)


@rule("native_batch_norm_backward",
      saves="grad_out, input, weight, running_mean, running_var, train, eps, output_mask",
      inputs="grad_out, input, weight")
def native_batch_norm_backward(n, gg, grad_out, input, weight, running_mean, running_var, train, eps, output_mask):
    dims = [0] + list(range(2, input.dim()))
    shape = [1, -1] + [1] * (input.dim() - 2)
    stats = None
    if not train:  # eval mode normalizes with the running statistics: constants
        stats = (running_mean.detach().reshape(shape), (running_var.detach().reshape(shape) + eps).rsqrt())

    def build(g, x, w):
        return _normalized_grads(g, x, None if w is None else w.reshape(shape), dims, eps, output_mask, stats)

    return _second_order("native_batch_norm_backward", n, gg, grad_out, input, weight, build)


@rule("native_group_norm_backward", saves="grad_out, input, rstd, weight, N, C, HxW, group, output_mask",
      inputs="grad_out, input, weight")
def native_group_norm_backward(n, gg, grad_out, input, rstd, weight, N, C, HxW, group, output_mask):
    grouped = [N, group, C // group, HxW]  # normalized over the last two dims; weight per channel
    xd = input.detach().reshape(grouped)
    var = ((xd - xd.mean([2, 3], keepdim=True)) ** 2).mean([2, 3], keepdim=True)
    eps = max((rstd.detach().reshape(var.shape) ** -2 - var).mean().item(), 0.0)
    ones = T.ones(1, group, C // group, 1, dtype=input.dtype, device=input.device)

    def build(g, x, w):
        w4 = ones if w is None else w.reshape(1, group, C // group, 1)
        outs = _normalized_grads(g.reshape(grouped), x.reshape(grouped), w4, [2, 3], eps, output_mask)
        return [None if o is None else o.reshape(input.shape if k == 0 else (C,)) for k, o in enumerate(outs)]

    return _second_order("native_group_norm_backward", n, gg, grad_out, input, weight, build)


# ---- mish, glu, prelu, embedding ----------------------------------------------------------------------------
_mish_backward = DISPATCHER.entry("aten::mish_backward").call
_glu_backward = DISPATCHER.entry("aten::glu_backward").call
_softplus = DISPATCHER.entry("aten::softplus").call


@rule("mish_backward", saves="grad_output, self", inputs="grad_output, self")
def mish_backward(n, gg, grad_output, self):
    if not n[1]:
        return _mish_backward(gg, self), None
    # mish = x tanh(sp(x)); with t = tanh(sp), s = sigmoid(x), h = 1 - t^2:
    # mish' = t + x h s, mish'' = 2 h s + x h s (1 - s - 2 t s)
    s = self.sigmoid()
    t = _softplus(self, 1, 20).tanh()
    h = 1 - t * t
    second = h * s * (2 + self * (1 - s - 2 * t * s))
    return n[0] and _mish_backward(gg, self), gg * grad_output * second


@rule("glu_backward", saves="grad_output, self, dim", inputs="grad_output, self")
def glu_backward(n, gg, grad_output, self, dim):
    # glu_backward(g, x) = cat(g s, g a s'), x = cat(a, b), s = sigmoid(b), s' = s (1 - s)
    a, b = self.chunk(2, dim)
    gga, ggb = gg.chunk(2, dim)
    s = b.sigmoid()
    ds = s * (1 - s)
    grad_go = n[0] and gga * s + ggb * a * ds
    grad_self = None
    if n[1]:
        d2s = ds * (1 - 2 * s)
        grad_self = T.cat([ggb * grad_output * ds, gga * grad_output * ds + ggb * grad_output * a * d2s], dim)
    return grad_go, grad_self


@rule("_prelu_kernel_backward", saves="grad_output, self, weight", inputs="grad_output, self, weight")
def prelu_kernel_backward(n, gg, grad_output, self, weight):
    # outputs: g * (x > 0 ? 1 : w) and g * (x > 0 ? 0 : x), both linear in g and piecewise in x, w
    gg_self, gg_weight = gg
    positive = self > 0
    grad_go = n[0] and T.where(positive, gg_self, gg_self * weight) + T.where(positive, 0.0, gg_weight * self)
    grad_self = n[1] and T.where(positive, 0.0, gg_weight * grad_output)
    grad_weight = n[2] and T.where(positive, 0.0, gg_self * grad_output)
    return grad_go, grad_self, grad_weight


@rule("embedding_dense_backward", saves="indices, padding_idx", inputs="grad_output")
def embedding_dense_backward(n, gg, indices, padding_idx):
    # PyTorch's embedding_dense_double_backward: gather the rows (scale_grad_by_freq is not applied)
    rows = gg.index_select(0, indices.reshape(-1))
    if padding_idx >= 0:
        rows = rows.masked_fill((indices == padding_idx).reshape(-1, 1), 0)
    return (rows.reshape(*indices.shape, gg.shape[-1]),)


_bce_backward = DISPATCHER.entry("aten::binary_cross_entropy_backward").call
_MEAN = 1  # at::Reduction::Mean


@rule("binary_cross_entropy_backward", saves="grad_output, self, target, weight, reduction",
      inputs="grad_output, self, target")
def binary_cross_entropy_backward(n, gg, grad_output, self, target, weight, reduction):
    # PyTorch's binary_cross_entropy_double_backward and ..._double_backward_target (eps 1e-12)
    grad_go = n[0] and _bce_backward(gg, self, target, weight, reduction)
    grad_self = grad_target = None
    if n[1]:
        eps = 1e-12
        gi = (self * self - 2 * self * target + target) / ((self + eps) ** 2 * (1 - self + eps) ** 2)
        gi = gi * (gg * grad_output)
        if weight is not None:
            gi = gi * weight
        grad_self = gi / self.numel() if reduction == _MEAN else gi
    if n[2]:
        res = -gg * grad_output
        if weight is not None:
            res = res * weight
        res = res / ((1 - self) * self).detach().clamp_min(1e-12)
        grad_target = res / self.numel() if reduction == _MEAN else res
    return grad_go, grad_self, grad_target
