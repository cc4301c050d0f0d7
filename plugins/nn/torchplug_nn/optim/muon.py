"""Muon: momentum SGD whose 2-D updates are orthogonalized by a Newton-Schulz iteration (PyTorch's rule)."""

from __future__ import annotations

import math
from typing import Any

import torchplug
from torchplug._tensor.tensor import Tensor

from ._common import eval_closure, lr_value
from .optimizer import Optimizer, _use_no_grad

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.775
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad: Tensor, ns_coefficients: tuple[float, float, float], ns_steps: int,
                                eps: float) -> Tensor:
    """Push ``grad``'s singular values towards 1 with ``ns_steps`` quintic Newton-Schulz iterations
    ``X <- a X + (b G + c G @ G) @ X`` (``G = X @ X.T``), in bfloat16 as PyTorch does."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    ortho_grad = grad.bfloat16()
    tall = grad.size(0) > grad.size(1)
    if tall:  # iterate on the wide orientation: the Gram matrix is then the smaller one
        ortho_grad = ortho_grad.T
    ortho_grad.div_(ortho_grad.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram_matrix = ortho_grad @ ortho_grad.T
        gram_update = torchplug.addmm(gram_matrix, gram_matrix, gram_matrix, beta=b, alpha=c)
        ortho_grad = torchplug.addmm(ortho_grad, gram_update, ortho_grad, beta=a)
    return ortho_grad.T if tall else ortho_grad


def _adjust_lr(lr: float, adjust_lr_fn: str | None, param_shape: Any) -> float:
    """Scale lr so the orthogonalized update's RMS does not depend on the matrix's aspect ratio."""
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Implements Muon (Jordan et al., "Muon: An optimizer for hidden layers in neural networks") as PyTorch does.

    Only for 2-D parameters (hidden-layer weight matrices); optimize biases and embeddings with e.g. AdamW.
    ``B = lerp(B, g, 1 - momentum)``; the update ``lerp(g, B, momentum)`` (Nesterov) or ``B`` is orthogonalized
    by ``ns_steps`` Newton-Schulz iterations in bfloat16; then ``p = p * (1 - lr * weight_decay)`` and
    ``p -= adjusted_lr * O`` with ``adjusted_lr = lr * sqrt(max(1, rows / cols))`` (``'original'``) or
    ``lr * 0.2 * sqrt(max(rows, cols))`` (``'match_rms_adamw'``).

    Args:
        params: 2-D parameters or param-group dicts to optimize.
        lr (float or 1-element Tensor): learning rate (default: 1e-3).
        weight_decay (float): decoupled weight decay (default: 0.1).
        momentum (float): momentum factor (default: 0.95).
        nesterov (bool): use Nesterov momentum (default: True).
        ns_coefficients (tuple[float, float, float]): the ``(a, b, c)`` of the iteration
            (default: (3.4445, -4.775, 2.0315)).
        eps (float): floor of the norm the update is first divided by (default: 1e-7).
        ns_steps (int): Newton-Schulz iterations, < 100 (default: 5).
        adjust_lr_fn (str, optional): ``None``/``'original'`` or ``'match_rms_adamw'`` (default: None).

    State per parameter: ``momentum_buffer``.
    """

    def __init__(self, params: Any, lr: Any = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS, adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        f"Muon only supports 2D parameters whereas we found a parameter with size: {p.size()}")

    @_use_no_grad
    def step(self, closure: Any = None) -> Any:
        """Perform one optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = eval_closure(closure)
        for group in self.param_groups:
            lr, weight_decay, momentum = lr_value(group["lr"]), group["weight_decay"], group["momentum"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if p.is_complex():
                    raise RuntimeError("Muon does not support complex parameters")
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torchplug.zeros_like(grad)
                if grad.ndim != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                buf = state["momentum_buffer"]
                buf.lerp_(grad, 1 - momentum)
                update = grad.lerp(buf, momentum) if group["nesterov"] else buf
                update = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
                adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
                p.mul_(1 - lr * weight_decay)
                p.add_(update, alpha=-adjusted_lr)
        return loss
