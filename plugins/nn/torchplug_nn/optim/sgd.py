"""SGD with momentum, dampening, Nesterov and weight decay (PyTorch's update rule)."""

from __future__ import annotations

from typing import Any

from ._common import check_tensor_lr
from .optimizer import Optimizer, _use_no_grad

__all__ = ["SGD"]


class SGD(Optimizer):
    def __init__(self, params: Any, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False, foreach: Any = None,
                 differentiable: bool = False, fused: Any = None) -> None:
        check_tensor_lr(lr)
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    @_use_no_grad
    def step(self, closure: Any = None) -> Any:
        loss = None
        if closure is not None:
            from .. import _grad

            with _grad.enable_grad():
                loss = closure()
        state = self.state
        for group in self.param_groups:
            lr = group["lr"]
            momentum = group["momentum"]
            dampening = group["dampening"]
            weight_decay = group["weight_decay"]
            nesterov = group["nesterov"]
            maximize = group["maximize"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if maximize:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                if momentum != 0:
                    pstate = state[p]
                    buf = pstate.get("momentum_buffer")
                    if buf is None:
                        buf = grad.detach().clone()
                        pstate["momentum_buffer"] = buf
                    else:
                        buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                    grad = grad.add(buf, alpha=momentum) if nesterov else buf
                p.add_(grad, alpha=-lr)
        return loss
