"""Adam and AdamW (decoupled weight decay), with amsgrad (PyTorch's single-tensor update rule)."""

from __future__ import annotations

from typing import Any

import torchplug

from ._common import check_hyperparameters, check_lr, params_with_grad, real_views
from .optimizer import Optimizer, _scalar_state, _use_no_grad

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: Any = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False, fused: Any = None,
                 decoupled_weight_decay: bool = False) -> None:
        check_lr(lr)
        check_hyperparameters(eps=eps, betas=betas, weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("decoupled_weight_decay", False)

    @_use_no_grad
    def step(self, closure: Any = None) -> Any:
        loss = None
        if closure is not None:
            from .. import _grad

            with _grad.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
            amsgrad, maximize, decoupled = group["amsgrad"], group["maximize"], group["decoupled_weight_decay"]
            for p, grad, state in params_with_grad(self, group):
                if len(state) == 0:
                    state["step"] = _scalar_state()
                    state["exp_avg"] = torchplug.zeros_like(p)
                    state["exp_avg_sq"] = torchplug.zeros_like(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = torchplug.zeros_like(p)
                if maximize:
                    grad = -grad
                step_t = state["step"]
                step_t.add_(1)
                if weight_decay != 0:
                    if decoupled:
                        p.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(p, alpha=weight_decay)
                p, grad, exp_avg, exp_avg_sq, max_sq = real_views(p, grad, state, "exp_avg", "exp_avg_sq",
                                                                  "max_exp_avg_sq")
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                step = step_t.item()
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2**0.5
                if amsgrad:
                    max_sq.copy_(torchplug.maximum(max_sq, exp_avg_sq))
                    denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                else:
                    denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                p.addcdiv_(exp_avg, denom, value=-step_size)
        return loss


class AdamW(Adam):
    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False, foreach: Any = None,
                 capturable: bool = False, differentiable: bool = False, fused: Any = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
