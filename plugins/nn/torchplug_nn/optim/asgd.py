"""ASGD: averaged stochastic gradient descent (PyTorch's single-tensor update rule)."""

from __future__ import annotations

from typing import Any

import torchplug

from ._common import (check_hyperparameters, check_lr, eval_closure, lr_value, params_with_grad, real_views,
                      scalar_tensor, set_group_defaults, tensorize_scalar_state)
from .optimizer import Optimizer, _use_no_grad

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Implements Averaged Stochastic Gradient Descent (Polyak & Juditsky, "Acceleration of stochastic
    approximation by averaging").

    Per step: ``p = p * (1 - lambd * eta) - eta * g``; the average ``ax`` tracks ``p`` (copied while ``mu == 1``,
    else ``ax += mu * (p - ax)``); then ``eta = lr / (1 + lambd * lr * t) ** alpha`` and
    ``mu = 1 / max(1, t - t0)``. ``eta`` and ``mu`` are 0-dim tensors, so they carry their dtype's rounding.

    Args:
        params: parameters or param-group dicts to optimize.
        lr (float or 1-element Tensor): learning rate (default: 1e-2).
        lambd (float): decay term (default: 1e-4).
        alpha (float): power of the ``eta`` update (default: 0.75).
        t0 (float): step at which averaging starts (default: 1e6).
        weight_decay (float): L2 penalty (default: 0).
        foreach (bool, optional): accepted, no effect (see below).
        maximize (bool): maximize the objective instead of minimizing it (default: False).

    ``foreach``, ``capturable`` and ``differentiable`` are accepted and kept in the param groups, as in PyTorch,
    but change nothing: they choose among PyTorch kernels that compute this same update.

    State per parameter: ``step``, ``eta``, ``mu`` (0-dim tensors) and ``ax`` (the averaged parameter).
    """

    def __init__(self, params: Any, lr: Any = 1e-2, lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
                 weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        check_lr(lr)
        check_hyperparameters(weight_decay=weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        set_group_defaults(self, foreach=None, maximize=False, differentiable=False, capturable=False)
        tensorize_scalar_state(self, ("step", "eta", "mu"))

    @_use_no_grad
    def step(self, closure: Any = None) -> Any:
        """Perform one optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = eval_closure(closure)
        for group in self.param_groups:
            lr, lambd, alpha, t0 = lr_value(group["lr"]), group["lambd"], group["alpha"], group["t0"]
            weight_decay, maximize = group["weight_decay"], group["maximize"]
            for p, grad, state in params_with_grad(self, group):
                if len(state) == 0:
                    state["step"] = scalar_tensor(0.0)
                    state["eta"] = scalar_tensor(lr)
                    state["mu"] = scalar_tensor(1.0)
                    state["ax"] = torchplug.zeros_like(p)
                if maximize:
                    grad = -grad
                p, grad, ax = real_views(p, grad, state, "ax")
                eta, mu = state["eta"], state["mu"]
                state["step"].add_(1)
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                eta_value = eta.item()
                p.mul_(1 - lambd * eta_value)
                p.add_(grad, alpha=-eta_value)
                mu_value = mu.item()
                if mu_value != 1:
                    ax.add_(p.sub(ax).mul_(mu_value))
                else:
                    ax.copy_(p)
                step = state["step"].item()
                # PyTorch builds the new values as default-dtype tensors before copying them in, so they carry that
                # rounding even when eta/mu were cast to float64 by load_state_dict.
                eta.copy_(torchplug.as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
                mu.copy_(torchplug.as_tensor(1 / max(1, step - t0)))
        return loss
