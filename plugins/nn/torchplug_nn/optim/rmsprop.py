"""RMSprop (centered, momentum, weight decay) and Adagrad (PyTorch's single-tensor update rules)."""

from __future__ import annotations

from typing import Any

import torchplug

from ._common import check_hyperparameters, check_lr, params_with_grad, real_views
from .optimizer import Optimizer, _scalar_state, _use_no_grad

__all__ = ["RMSprop", "Adagrad"]


class RMSprop(Optimizer):
    def __init__(self, params: Any, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0,
                 momentum: float = 0, centered: bool = False, capturable: bool = False, foreach: Any = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        check_lr(lr)
        check_hyperparameters(eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    @_use_no_grad
    def step(self, closure: Any = None) -> Any:
        loss = None
        if closure is not None:
            from .. import _grad

            with _grad.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            weight_decay, momentum, centered, maximize = group["weight_decay"], group["momentum"], group["centered"], group["maximize"]
            for p, grad, state in params_with_grad(self, group):
                if len(state) == 0:
                    state["step"] = _scalar_state()
                    state["square_avg"] = torchplug.zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = torchplug.zeros_like(p)
                    if centered:
                        state["grad_avg"] = torchplug.zeros_like(p)
                state["step"].add_(1)
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                p, grad, square_avg, grad_avg, buf = real_views(p, grad, state, "square_avg", "grad_avg",
                                                                "momentum_buffer")
                square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
                if centered:
                    grad_avg.lerp_(grad, 1 - alpha)
                    avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
                else:
                    avg = square_avg.sqrt()
                avg = avg.add_(eps)
                if momentum > 0:
                    buf.mul_(momentum).addcdiv_(grad, avg)
                    p.add_(buf, alpha=-lr)
                else:
                    p.addcdiv_(grad, avg, value=-lr)
        return loss


class Adagrad(Optimizer):
    def __init__(self, params: Any, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: Any = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: Any = None) -> None:
        check_lr(lr)
        check_hyperparameters(lr_decay=lr_decay, weight_decay=weight_decay,
                              initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _scalar_state()
                state["sum"] = torchplug.full_like(p, group["initial_accumulator_value"])

    @_use_no_grad
    def step(self, closure: Any = None) -> Any:
        loss = None
        if closure is not None:
            from .. import _grad

            with _grad.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, lr_decay, weight_decay, eps, maximize = (group["lr"], group["lr_decay"], group["weight_decay"],
                                                         group["eps"], group["maximize"])
            for p, grad, state in params_with_grad(self, group):
                step_t = state["step"]
                step_t.add_(1)
                step = step_t.item()
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                clr = lr / (1 + (step - 1) * lr_decay)
                p, grad, state_sum = real_views(p, grad, state, "sum")
                state_sum.addcmul_(grad, grad, value=1)
                std = state_sum.sqrt().add_(eps)
                p.addcdiv_(grad, std, value=-clr)
        return loss
