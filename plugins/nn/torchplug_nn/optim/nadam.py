"""NAdam: Adam with Nesterov momentum and a momentum-decay schedule (PyTorch's single-tensor update rule)."""

from __future__ import annotations

from typing import Any

import torchplug

from ._common import (check_hyperparameters, check_lr, eval_closure, lr_value, params_with_grad, real_views,
                      scalar_tensor, set_group_defaults, tensorize_scalar_state)
from .optimizer import Optimizer, _use_no_grad

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """Implements NAdam (Dozat, "Incorporating Nesterov Momentum into Adam").

    Per step ``t``: the momentum coefficients are ``mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))``
    and ``mu_{t+1}``; ``mu_product`` keeps the running product of the ``mu``'s. With ``m``/``v`` the usual Adam
    moments and ``denom = sqrt(v / (1 - beta2**t)) + eps`` the parameter moves by
    ``-lr * (1 - mu_t) / (1 - mu_product) * g / denom - lr * mu_{t+1} / (1 - mu_product * mu_{t+1}) * m / denom``.

    Args:
        params: parameters or param-group dicts to optimize.
        lr (float or 1-element Tensor): learning rate (default: 2e-3).
        betas (tuple[float, float]): coefficients of the running averages of the gradient and its square
            (default: (0.9, 0.999)).
        eps (float): added to the denominator for numerical stability (default: 1e-8).
        weight_decay (float): L2 penalty (default: 0).
        momentum_decay (float): the ``psi`` of the momentum schedule (default: 4e-3).
        decoupled_weight_decay (bool): decay the weights directly, as AdamW does (NAdamW) (default: False).
        maximize (bool): maximize the objective instead of minimizing it (default: False).

    ``foreach``, ``capturable`` and ``differentiable`` are accepted and kept in the param groups, as in PyTorch,
    but change nothing: they choose among PyTorch kernels that compute this same update.

    State per parameter: ``step`` and ``mu_product`` (0-dim tensors), ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params: Any, lr: Any = 2e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_lr(lr)
        check_hyperparameters(eps=eps, betas=betas, weight_decay=weight_decay, momentum_decay=momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        set_group_defaults(self, maximize=False, foreach=None, capturable=False, differentiable=False,
                           decoupled_weight_decay=False)
        tensorize_scalar_state(self, ("step", "mu_product"))

    @_use_no_grad
    def step(self, closure: Any = None) -> Any:
        """Perform one optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = eval_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = lr_value(group["lr"]), group["eps"], group["weight_decay"]
            momentum_decay, decoupled, maximize = group["momentum_decay"], group["decoupled_weight_decay"], group["maximize"]
            for p, grad, state in params_with_grad(self, group):
                if len(state) == 0:
                    state["step"] = scalar_tensor(0.0)
                    state["mu_product"] = scalar_tensor(1.0)
                    state["exp_avg"] = torchplug.zeros_like(p)
                    state["exp_avg_sq"] = torchplug.zeros_like(p)
                if maximize:
                    grad = -grad
                p, grad, exp_avg, exp_avg_sq = real_views(p, grad, state, "exp_avg", "exp_avg_sq")
                mu_product = state["mu_product"]
                state["step"].add_(1)
                step = state["step"].item()
                bias_correction2 = 1 - beta2**step
                if weight_decay != 0:
                    if decoupled:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p, alpha=weight_decay)
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                # mu_product is a scalar tensor (float32 unless float64 is the default dtype): its rounding is
                # part of the trajectory, so it is multiplied in place exactly as PyTorch does.
                mu_product.mul_(mu)
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = exp_avg_sq.div(bias_correction2).sqrt().add_(eps)
                mu_prod = mu_product.item()
                p.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_prod))
                p.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_prod * mu_next))
        return loss
