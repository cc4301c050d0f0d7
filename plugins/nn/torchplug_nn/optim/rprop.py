"""Rprop: resilient backpropagation, sign-based steps with per-coordinate adaptive sizes."""

from __future__ import annotations

from typing import Any

import torchplug

from ._common import (check_lr, eval_closure, lr_value, params_with_grad, real_views, scalar_tensor,
                      set_group_defaults, tensorize_scalar_state)
from .optimizer import Optimizer, _use_no_grad

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Implements the resilient backpropagation algorithm (Riedmiller & Braun, "A direct adaptive method for
    faster backpropagation learning: The RPROP algorithm").

    Each coordinate's step size grows by ``etaplus`` while its gradient keeps its sign, shrinks by ``etaminus``
    when the sign flips (and that step is skipped: the stored gradient becomes 0), and is clamped to
    ``step_sizes``; the parameter moves by ``-sign(g) * step_size``.

    Args:
        params: parameters or param-group dicts to optimize.
        lr (float or 1-element Tensor): initial step size of every coordinate (default: 1e-2).
        etas (tuple[float, float]): ``(etaminus, etaplus)``, with ``0 < etaminus < 1 < etaplus``
            (default: (0.5, 1.2)).
        step_sizes (tuple[float, float]): minimal and maximal step sizes (default: (1e-6, 50)).
        maximize (bool): maximize the objective instead of minimizing it (default: False).

    ``foreach``, ``capturable`` and ``differentiable`` are accepted and kept in the param groups, as in PyTorch,
    but change nothing: they choose among PyTorch kernels that compute this same update.

    State per parameter: ``step`` (0-dim tensor), ``prev`` (the last gradient used), ``step_size``.
    """

    def __init__(self, params: Any, lr: Any = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
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
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            maximize = group["maximize"]
            for p, grad, state in params_with_grad(self, group):
                if len(state) == 0:
                    state["step"] = scalar_tensor(0.0)
                    state["prev"] = torchplug.zeros_like(p)
                    lr = lr_value(group["lr"])
                    # as PyTorch: a complex parameter's real and imaginary parts each start with step size lr
                    state["step_size"] = torchplug.full_like(grad, complex(lr, lr) if p.is_complex() else lr)
                if maximize:
                    grad = -grad
                p, grad, prev, step_size = real_views(p, grad, state, "prev", "step_size")
                state["step"].add_(1)
                # Sign agreement with the previous gradient picks the factor: etaplus (same sign), etaminus
                # (flipped) or 1 (either is zero). Written into ``sign`` itself so it keeps the parameter's dtype.
                sign = grad.mul(prev).sign()
                flipped = sign.lt(0)
                sign[sign.gt(0)] = etaplus
                sign[flipped] = etaminus
                sign[sign.eq(0)] = 1
                step_size.mul_(sign).clamp_(step_size_min, step_size_max)
                # After a sign flip the step is skipped and the flip is forgotten (dfdx = 0 for the next step).
                grad = grad.clone()
                grad[flipped] = 0
                p.addcmul_(grad.sign(), step_size, value=-1)
                prev.copy_(grad)
        return loss
