"""Adafactor: factored second-moment estimates with relative step sizes (PyTorch's single-tensor rule)."""

from __future__ import annotations

from typing import Any

import torchplug
from torchplug._tensor.tensor import Tensor

from ._common import eval_closure, lr_value, scalar_tensor, set_group_defaults, tensorize_scalar_state
from .optimizer import Optimizer, _use_no_grad

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Implements Adafactor (Shazeer & Stern, "Adafactor: Adaptive Learning Rates with Sublinear Memory Cost") as
    PyTorch does.

    For a matrix (or batch of matrices) the squared gradient's running average is kept factored: row means
    ``row_var`` and column means ``col_var``, with ``V = row_var @ col_var / max(mean(row_var), eps1)``; vectors
    keep a full ``variance``. With ``1 - beta2_t = t ** beta2_decay``, ``rho_t = min(lr, 1 / sqrt(t))`` and
    ``alpha_t = max(eps2, RMS(p)) * rho_t``: ``U = g / sqrt(max(V, eps1**2))``, clipped to RMS ``d``, and
    ``p = p * (1 - lr * weight_decay) - alpha_t * U``. As in PyTorch, ``lr`` only caps ``rho_t`` and scales the
    (decoupled) weight decay.

    Args:
        params: parameters or param-group dicts to optimize (real).
        lr (float or 1-element Tensor): maximum relative step size, and weight-decay scale (default: 1e-2).
        beta2_decay (float): the ``beta2`` schedule exponent, <= 0 (default: -0.8).
        eps (tuple[float | None, float]): ``eps1`` stabilizes the denominators (``None``: the machine epsilon of
            the parameter's dtype) and ``eps2`` floors the parameter RMS (default: (None, 1e-3)).
        d (float): update clipping threshold, >= 1 (default: 1.0).
        weight_decay (float): decoupled weight-decay coefficient (default: 0.0).
        foreach (bool, optional): accepted and stored, no effect (PyTorch's multi-tensor kernel computes the same).
        maximize (bool): maximize the objective instead of minimizing it (default: False).

    State per parameter: ``step`` (0-dim tensor), and ``row_var``/``col_var`` (matrices) or ``variance``.
    """

    def __init__(self, params: Any, lr: Any = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        set_group_defaults(self, foreach=None)
        tensorize_scalar_state(self, ("step",))

    @_use_no_grad
    def step(self, closure: Any = None) -> Any:
        """Perform one optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = eval_closure(closure)
        for group in self.param_groups:
            lr, beta2_decay, d = lr_value(group["lr"]), group["beta2_decay"], group["d"]
            weight_decay, maximize = group["weight_decay"], group["maximize"]
            eps1, eps2 = group["eps"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = scalar_tensor(0.0)
                    if grad.dim() > 1:
                        state["row_var"] = grad.new_zeros((*grad.shape[:-1], 1))
                        state["col_var"] = grad.new_zeros((*grad.shape[:-2], 1, grad.shape[-1]))
                    else:
                        state["variance"] = torchplug.zeros_like(grad)
                if maximize:
                    grad = -grad
                # eps1=None means "the machine epsilon of this parameter's dtype"; PyTorch resolves it from the
                # group's first parameter and keeps it for the rest of the group.
                if eps1 is None:
                    eps1 = torchplug.finfo(p.dtype).eps
                state["step"].add_(1)
                step = state["step"].item()
                one_minus_beta2_t = step**beta2_decay
                rho_t = min(lr, 1 / step**0.5)
                alpha = max(eps2, p.norm(2).item() / p.numel() ** 0.5) * rho_t
                if weight_decay != 0:
                    p.mul_(1 - lr * weight_decay)
                if grad.dim() > 1:
                    row_var, col_var = state["row_var"], state["col_var"]
                    row_mean = torchplug.norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1))
                    row_var.lerp_(row_mean, one_minus_beta2_t)
                    col_mean = torchplug.norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2))
                    col_var.lerp_(col_mean, one_minus_beta2_t)
                    var_estimate = row_var @ col_var
                    var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
                else:
                    variance = state["variance"]
                    variance.lerp_(grad * grad, one_minus_beta2_t)
                    var_estimate = variance.clone()
                update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
                update.mul_(grad)
                denom = max(1.0, update.norm(2).item() / (update.numel() ** 0.5 * d))
                p.add_(update, alpha=-alpha / denom)
        return loss
