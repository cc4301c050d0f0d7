"""Gradient clipping over an iterable of parameters."""

from __future__ import annotations

import math
from typing import Any

import torchplug
from torchplug._tensor.tensor import Tensor

from ... import _grad

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _grads(parameters: Any) -> list[Tensor]:
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def _norm(t: Tensor, norm_type: float) -> Tensor:
    if norm_type == math.inf:
        return t.abs().max().to(torchplug.float32) if t.numel() else torchplug.tensor(0.0)
    if norm_type == 2.0:
        return (t * t).sum().sqrt()
    return (t.abs() ** norm_type).sum() ** (1.0 / norm_type)


def get_total_norm(tensors: Any, norm_type: float = 2.0, error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return torchplug.tensor(0.0)
    norms = torchplug.stack([_norm(g, norm_type) for g in tensors])
    total = _norm(norms, norm_type)
    if error_if_nonfinite and not bool(total.isfinite()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`")
    return total


def clip_grad_norm_(parameters: Any, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: Any = None) -> Tensor:
    """Scale gradients in place so their total norm is at most ``max_norm``; returns the total norm."""
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    if not grads:
        return total
    clip_coef = float(max_norm) / (total + 1e-6)
    clip_coef_clamped = clip_coef.clamp(max=1.0)
    with _grad.no_grad():
        for g in grads:
            g.mul_(clip_coef_clamped.to(g.dtype))
    return total


def clip_grad_norm(parameters: Any, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: Any = None) -> Tensor:
    import warnings

    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: Any, clip_value: float, foreach: Any = None) -> None:
    clip_value = float(clip_value)
    with _grad.no_grad():
        for g in _grads(parameters):
            g.clamp_(min=-clip_value, max=clip_value)


def clip_grads_with_norm_(parameters: Any, max_norm: float, total_norm: Tensor, foreach: Any = None) -> None:
    """Scale the gradients in place by ``min(1, max_norm / (total_norm + 1e-6))`` (``total_norm`` precomputed,
    e.g. by :func:`get_total_norm`)."""
    grads = _grads(parameters)
    if not grads:
        return
    clip_coef_clamped = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
    with _grad.no_grad():
        for g in grads:
            g.mul_(clip_coef_clamped.to(g.device))
