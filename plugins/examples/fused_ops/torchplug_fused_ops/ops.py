"""The ops of this plugin, declared (not registered) at import time.

- ``fused::bias_gelu(x, bias)``: GELU(x + bias) in one C++ pass (one read, one write) instead
  of three built-in ops; ``fused::bias_gelu_backward`` is its gradient kernel, also C++.
- ``fused::rms_norm(x, weight, eps)``: RMSNorm written in Python with built-in ops, with a
  hand-written backward and an autocast rule (it runs in float32 under autocast).

Each op has a fake kernel (so it runs on the meta device and in ``memory_estimate``) and an
autograd formula.  The plugin hook in ``__init__`` installs them.
"""

from __future__ import annotations

import math

import torchplug as torch
from torchplug import Tensor
from torchplug.library import OpLibrary

from . import _C

__all__ = ["OPS", "bias_gelu", "bias_gelu_backward", "rms_norm"]

OPS = OpLibrary("fused")
_NATIVE = (torch.float32, torch.float64)


def _check_bias(x: Tensor, bias: Tensor, op: str) -> None:
    if bias.dim() != 1 or x.dim() < 1 or x.shape[-1] != bias.shape[0]:
        raise RuntimeError(
            f"fused::{op}: bias must be 1-D with x.shape[-1] elements; got x of shape {tuple(x.shape)} and bias of "
            f"shape {tuple(bias.shape)}."
        )
    if x.dtype != bias.dtype:
        raise RuntimeError(f"fused::{op}: x and bias must have the same dtype, got {x.dtype} and {bias.dtype}.")


def _gelu_reference(v: Tensor) -> Tensor:
    # Built-in ops, for dtypes the C++ kernel does not instantiate (float16, bfloat16).
    return 0.5 * v * (1.0 + torch.erf(v * (1.0 / math.sqrt(2.0))))


# -- bias + GELU (C++) ------------------------------------------------------------------------------
@OPS.custom_op("fused::bias_gelu", mutates_args=(), device_types="cpu")
def bias_gelu(x: Tensor, bias: Tensor) -> Tensor:
    """GELU(x + bias), bias broadcast along the last dimension."""
    _check_bias(x, bias, "bias_gelu")
    if x.dtype not in _NATIVE:
        return _gelu_reference(x + bias)
    # .numpy() of a contiguous cpu tensor is a view: the kernel reads the tensor's memory.
    out = _C.bias_gelu(x.contiguous().numpy(), bias.contiguous().numpy())
    return torch.from_numpy(out)


@bias_gelu.register_fake
def _(x: Tensor, bias: Tensor) -> Tensor:
    _check_bias(x, bias, "bias_gelu")
    return x.new_empty(x.shape)  # contiguous, like the C++ kernel's output


@OPS.custom_op("fused::bias_gelu_backward", mutates_args=(), device_types="cpu")
def bias_gelu_backward(grad: Tensor, x: Tensor, bias: Tensor) -> Tensor:
    """grad * GELU'(x + bias): the gradient of bias_gelu with respect to x."""
    _check_bias(x, bias, "bias_gelu_backward")
    if x.dtype not in _NATIVE:
        v = x + bias
        cdf = 0.5 * (1.0 + torch.erf(v * (1.0 / math.sqrt(2.0))))
        pdf = torch.exp(-0.5 * v * v) * (1.0 / math.sqrt(2.0 * math.pi))
        return grad * (cdf + v * pdf)
    g = grad.to(x.dtype).contiguous().expand(x.shape).contiguous()
    out = _C.bias_gelu_backward(g.numpy(), x.contiguous().numpy(), bias.contiguous().numpy())
    return torch.from_numpy(out)


@bias_gelu_backward.register_fake
def _(grad: Tensor, x: Tensor, bias: Tensor) -> Tensor:
    _check_bias(x, bias, "bias_gelu_backward")
    return x.new_empty(x.shape)


def _bias_gelu_setup(ctx, inputs, output) -> None:
    x, bias = inputs
    ctx.save_for_backward(x, bias)


def _bias_gelu_grad(ctx, grad: Tensor):
    x, bias = ctx.saved_tensors
    grad_v = bias_gelu_backward(grad, x, bias)
    grad_x = grad_v if ctx.needs_input_grad[0] else None
    grad_bias = grad_v.sum(dim=tuple(range(grad_v.dim() - 1))) if ctx.needs_input_grad[1] else None
    return grad_x, grad_bias


bias_gelu.register_autograd(_bias_gelu_grad, setup_context=_bias_gelu_setup)


# -- RMSNorm (pure Python) --------------------------------------------------------------------------------
@OPS.custom_op("fused::rms_norm", mutates_args=())
def rms_norm(x: Tensor, weight: Tensor, eps: float = 1e-6) -> Tensor:
    """x / sqrt(mean(x**2, -1) + eps) * weight, over the last dimension."""
    rstd = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)
    return x * rstd * weight


@rms_norm.register_fake
def _(x: Tensor, weight: Tensor, eps: float = 1e-6) -> Tensor:
    if weight.shape != x.shape[-1:]:
        raise RuntimeError(f"fused::rms_norm: weight must have shape {tuple(x.shape[-1:])}, got {tuple(weight.shape)}.")
    return torch.empty(x.shape, dtype=torch.promote_types(x.dtype, weight.dtype), device=x.device)


def _rms_norm_setup(ctx, inputs, output) -> None:
    x, weight, eps = inputs
    ctx.save_for_backward(x, weight)
    ctx.eps = eps


def _rms_norm_grad(ctx, grad: Tensor):
    x, weight = ctx.saved_tensors
    rstd = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + ctx.eps)
    xhat = x * rstd
    dxhat = grad * weight
    grad_x = rstd * (dxhat - xhat * (dxhat * xhat).mean(dim=-1, keepdim=True))
    grad_w = (grad * xhat).sum(dim=tuple(range(x.dim() - 1))) if ctx.needs_input_grad[1] else None
    return grad_x, grad_w, None


rms_norm.register_autograd(_rms_norm_grad, setup_context=_rms_norm_setup)
# Normalisation wants float32 inside autocast regions, whatever the surrounding dtype.
rms_norm.register_autocast("cpu", torch.float32)
