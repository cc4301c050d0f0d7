"""Adadelta: per-coordinate step sizes from running averages of squared gradients and updates."""

from __future__ import annotations

from typing import Any

import torchplug

from ._common import (check_hyperparameters, check_lr, eval_closure, lr_value, params_with_grad, real_views,
                      scalar_tensor, set_group_defaults, tensorize_scalar_state)
from .optimizer import Optimizer, _use_no_grad

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Implements Adadelta (Zeiler, "ADADELTA: An Adaptive Learning Rate Method").

    ``v = rho * v + (1 - rho) * g**2``; ``delta = sqrt(u + eps) / sqrt(v + eps) * g``;
    ``u = rho * u + (1 - rho) * delta**2``; the parameter moves by ``-lr * delta``.

    Args:
        params: parameters or param-group dicts to optimize.
        lr (float or 1-element Tensor): coefficient that scales delta before it is applied (default: 1.0).
        rho (float): coefficient of the running averages (default: 0.9).
        eps (float): added inside the square roots for numerical stability (default: 1e-6).
        weight_decay (float): L2 penalty (default: 0).
        foreach (bool, optional): accepted, no effect (see below).
        maximize (bool): maximize the objective instead of minimizing it (default: False).

    ``foreach``, ``capturable`` and ``differentiable`` are accepted and kept in the param groups, as in PyTorch,
    but change nothing: they choose among PyTorch kernels that compute this same update.

    State per parameter: ``step`` (0-dim tensor), ``square_avg``, ``acc_delta``.
    """

    def __init__(self, params: Any, lr: Any = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0,
                 foreach: bool | None = None, *, capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_lr(lr)
        check_hyperparameters(rho=rho, eps=eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        set_group_defaults(self, foreach=None, maximize=False, differentiable=False, capturable=False)
        tensorize_scalar_state(self, ("step",))

    @_use_no_grad
    def step(self, closure: Any = None) -> Any:
        """Perform one optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = eval_closure(closure)
        for group in self.param_groups:
            lr, rho, eps = lr_value(group["lr"]), group["rho"], group["eps"]
            weight_decay, maximize = group["weight_decay"], group["maximize"]
            for p, grad, state in params_with_grad(self, group):
                if len(state) == 0:
                    state["step"] = scalar_tensor(0.0)
                    state["square_avg"] = torchplug.zeros_like(p)
                    state["acc_delta"] = torchplug.zeros_like(p)
                state["step"].add_(1)
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                p, grad, square_avg, acc_delta = real_views(p, grad, state, "square_avg", "acc_delta")
                square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
                std = square_avg.add(eps).sqrt_()
                delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
                acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
                p.add_(delta, alpha=-lr)
        return loss
