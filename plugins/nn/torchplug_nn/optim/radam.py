"""RAdam: Adam with a rectified (variance-corrected) adaptive learning rate (PyTorch's single-tensor rule)."""

from __future__ import annotations

from typing import Any

import torchplug

from ._common import (check_hyperparameters, check_lr, eval_closure, lr_value, params_with_grad, real_views,
                      scalar_tensor, set_group_defaults, tensorize_scalar_state)
from .optimizer import Optimizer, _use_no_grad

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """Implements RAdam (Liu et al., "On the Variance of the Adaptive Learning Rate and Beyond").

    With ``rho_inf = 2 / (1 - beta2) - 1`` and ``rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)``: while
    ``rho_t <= 5`` the step is plain momentum SGD on the bias-corrected first moment; afterwards it is scaled by
    the adaptive term ``sqrt(1 - beta2**t) / (sqrt(v) + eps)`` and the rectification
    ``sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))``.

    Args:
        params: parameters or param-group dicts to optimize.
        lr (float or 1-element Tensor): learning rate (default: 1e-3).
        betas (tuple[float, float]): running-average coefficients (default: (0.9, 0.999)).
        eps (float): added to the denominator for numerical stability (default: 1e-8).
        weight_decay (float): weight decay (default: 0).
        decoupled_weight_decay (bool): decay the weights directly, as AdamW does (RAdamW) (default: False).
        maximize (bool): maximize the objective instead of minimizing it (default: False).

    ``foreach``, ``capturable`` and ``differentiable`` are accepted and kept in the param groups, as in PyTorch,
    but change nothing: they choose among PyTorch kernels that compute this same update.

    State per parameter: ``step`` (0-dim tensor), ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params: Any, lr: Any = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False) -> None:
        check_lr(lr)
        check_hyperparameters(eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        set_group_defaults(self, foreach=None, maximize=False, differentiable=False, decoupled_weight_decay=False,
                           capturable=False)
        tensorize_scalar_state(self, ("step",))

    @_use_no_grad
    def step(self, closure: Any = None) -> Any:
        """Perform one optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = eval_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = lr_value(group["lr"]), group["eps"], group["weight_decay"]
            decoupled, maximize = group["decoupled_weight_decay"], group["maximize"]
            rho_inf = 2 / (1 - beta2) - 1
            for p, grad, state in params_with_grad(self, group):
                if len(state) == 0:
                    state["step"] = scalar_tensor(0.0)
                    state["exp_avg"] = torchplug.zeros_like(p)
                    state["exp_avg_sq"] = torchplug.zeros_like(p)
                if maximize:
                    grad = -grad
                p, grad, exp_avg, exp_avg_sq = real_views(p, grad, state, "exp_avg", "exp_avg_sq")
                state["step"].add_(1)
                step = state["step"].item()
                if weight_decay != 0:
                    if decoupled:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p, alpha=weight_decay)
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                bias_corrected_exp_avg = exp_avg / bias_correction1
                rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    adaptive_lr = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(eps)
                    # Same association as PyTorch ((m_hat * lr) * adaptive) * rect, so the rounding agrees.
                    p.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
                else:
                    p.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
        return loss
