"""SparseAdam: Adam restricted to the entries a sparse gradient touches (PyTorch's masked update rule)."""

from __future__ import annotations

import math
from typing import Any

import torchplug

from ._common import check_hyperparameters, check_lr, eval_closure, lr_value
from .optimizer import Optimizer, _use_no_grad

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Implements the masked Adam variant PyTorch offers for sparse gradients.

    Only the moments and parameter entries named by a sparse gradient's indices are updated, with Adam's rule
    and bias corrections (``step`` counts the steps in which the parameter had a gradient).

    .. note::
        torchplug has no sparse tensor layout yet: ``nn.Embedding(sparse=True)`` produces dense gradients.
        As in PyTorch, a dense gradient is refused with ``RuntimeError("SparseAdam does not support dense
        gradients, please consider Adam instead")``. The sparse update itself is implemented against the COO
        protocol (``is_sparse``, ``coalesce()``, ``_indices()``, ``_values()``) so it works as soon as such
        gradients exist.

    Args:
        params: parameters or param-group dicts to optimize (dense, real).
        lr (float or 1-element Tensor): learning rate, > 0 (default: 1e-3).
        betas (tuple[float, float]): running-average coefficients (default: (0.9, 0.999)).
        eps (float): added to the denominator, > 0 (default: 1e-8).
        maximize (bool): maximize the objective instead of minimizing it (default: False).

    State per parameter: ``step`` (a Python int, as in PyTorch), ``exp_avg``, ``exp_avg_sq``.
    """

    def __init__(self, params: Any, lr: Any = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        check_lr(lr, strict=True)
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_hyperparameters(betas=betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        sparse_params, complex_params = [], []
        for index, group in enumerate(self.param_groups):
            for d_index, d_param in enumerate(group["params"]):
                if getattr(d_param, "is_sparse", False):
                    sparse_params.append([index, d_index])
                if d_param.is_complex():
                    complex_params.append([index, d_index])
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires dense parameter tensors")
        if complex_params:
            raise ValueError(
                f"Complex params at indices {complex_params}: SparseAdam does not support complex parameters")

    @_use_no_grad
    def step(self, closure: Any = None) -> Any:
        """Perform one optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = eval_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, maximize = lr_value(group["lr"]), group["eps"], group.get("maximize", False)
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if not getattr(grad, "is_sparse", False):
                    raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = torchplug.zeros_like(p)
                    state["exp_avg_sq"] = torchplug.zeros_like(p)
                state["step"] += 1
                grad = grad.coalesce()  # the update is non-linear, so each index must appear once
                sparse_adam_update(p, state["exp_avg"], state["exp_avg_sq"], grad._indices(), grad._values(),
                                   state["step"], lr=lr, beta1=beta1, beta2=beta2, eps=eps, maximize=maximize)
        return loss


def sparse_adam_update(param: Any, exp_avg: Any, exp_avg_sq: Any, indices: Any, values: Any, step: int, *,
                       lr: float, beta1: float, beta2: float, eps: float, maximize: bool) -> None:
    """Adam on the entries of ``param`` addressed by a coalesced COO gradient.

    ``indices`` is ``(sparse_dim, nnz)`` (unique columns) and ``values`` is ``(nnz, *dense_dims)``; entries not
    addressed are left untouched, moments included. The arithmetic follows PyTorch's ``sparse_adam`` step by step.
    """
    if values.numel() == 0:
        return
    if maximize:
        values = -values
    where = tuple(indices[i] for i in range(indices.shape[0]))
    old_exp_avg = exp_avg[where]
    exp_avg_update = values.sub(old_exp_avg).mul_(1 - beta1)
    exp_avg[where] = old_exp_avg + exp_avg_update
    old_exp_avg_sq = exp_avg_sq[where]
    exp_avg_sq_update = values.pow(2).sub_(old_exp_avg_sq).mul_(1 - beta2)
    exp_avg_sq[where] = old_exp_avg_sq + exp_avg_sq_update
    numer = exp_avg_update.add_(old_exp_avg)
    denom = exp_avg_sq_update.add_(old_exp_avg_sq).sqrt_().add_(eps)
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    step_size = lr * math.sqrt(bias_correction2) / bias_correction1
    param[where] = param[where] + (-step_size * numer.div_(denom))
