"""Adamax: Adam with the infinity norm in place of the second moment (PyTorch's single-tensor rule)."""

from __future__ import annotations

from typing import Any

import torchplug

from ._common import (check_hyperparameters, check_lr, eval_closure, lr_value, params_with_grad, real_views,
                      scalar_tensor, set_group_defaults, tensorize_scalar_state)
from .optimizer import Optimizer, _use_no_grad

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Implements Adamax (the infinity-norm variant in Kingma & Ba, "Adam: A Method for Stochastic Optimization").

    ``m = lerp(m, g, 1 - beta1)``, ``u = max(beta2 * u, |g| + eps)``, and the parameter moves by
    ``-lr / (1 - beta1**t) * m / u``.

    Args:
        params: parameters or param-group dicts to optimize.
        lr (float or 1-element Tensor): learning rate (default: 2e-3).
        betas (tuple[float, float]): coefficients of the running average and of the infinity norm
            (default: (0.9, 0.999)).
        eps (float): added to ``|g|`` for numerical stability (default: 1e-8).
        weight_decay (float): L2 penalty (default: 0).
        foreach (bool, optional): accepted, no effect (see below).
        maximize (bool): maximize the objective instead of minimizing it (default: False).

    ``foreach``, ``capturable`` and ``differentiable`` are accepted and kept in the param groups, as in PyTorch,
    but change nothing: they choose among PyTorch kernels that compute this same update.

    State per parameter: ``step`` (0-dim tensor), ``exp_avg``, ``exp_inf``.
    """

    def __init__(self, params: Any, lr: Any = 2e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        check_lr(lr)
        check_hyperparameters(eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
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
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay, maximize = lr_value(group["lr"]), group["eps"], group["weight_decay"], group["maximize"]
            for p, grad, state in params_with_grad(self, group):
                if len(state) == 0:
                    state["step"] = scalar_tensor(0.0)
                    state["exp_avg"] = torchplug.zeros_like(p)
                    state["exp_inf"] = torchplug.zeros_like(p)
                if maximize:
                    grad = -grad
                p, grad, exp_avg, exp_inf = real_views(p, grad, state, "exp_avg", "exp_inf")
                state["step"].add_(1)
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                exp_avg.lerp_(grad, 1 - beta1)
                torchplug.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
                clr = lr / (1 - beta1 ** state["step"].item())
                p.addcdiv_(exp_avg, exp_inf, value=-clr)
        return loss
