"""Small helpers shared by the optimizers: closure evaluation, hyper-parameter checks, scalar state."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torchplug
from torchplug._tensor.tensor import Tensor

from .. import _grad

__all__ = ["eval_closure", "check_lr", "check_tensor_lr", "check_hyperparameters", "lr_value", "scalar_dtype", "scalar_tensor",
           "params_with_grad", "real_views", "set_group_defaults", "tensorize_scalar_state"]


def eval_closure(closure: Any) -> Any:
    """Call ``closure`` (if given) with grad enabled, as ``Optimizer.step`` does, and return its loss."""
    if closure is None:
        return None
    with _grad.enable_grad():
        return closure()


def check_tensor_lr(lr: Any) -> None:
    """A tensor learning rate must hold exactly one element (PyTorch's first check on ``lr``)."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def check_lr(lr: Any, strict: bool = False) -> None:
    """PyTorch's learning-rate checks: a tensor lr must hold one element; lr >= 0 (> 0 when ``strict``)."""
    check_tensor_lr(lr)
    if not (0.0 < lr if strict else 0.0 <= lr):
        raise ValueError(f"Invalid learning rate: {lr}")


def check_hyperparameters(**values: Any) -> None:
    """PyTorch's range checks on optimizer hyper-parameters, run in the order the keywords are given.

    ``betas`` must satisfy ``0 <= beta < 1`` (index 0 checked first), ``rho`` ``0 <= rho <= 1``; every other
    value must be ``>= 0``. The first failing check raises ``ValueError`` with PyTorch's message
    (``eps`` is reported as "epsilon"). NaN fails every check, as in PyTorch's ``not 0.0 <= x`` form.
    """
    for name, value in values.items():
        if name == "betas":
            if not 0.0 <= value[0] < 1.0:
                raise ValueError(f"Invalid beta parameter at index 0: {value[0]}")
            if not 0.0 <= value[1] < 1.0:
                raise ValueError(f"Invalid beta parameter at index 1: {value[1]}")
        elif name == "rho":
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"Invalid rho value: {value}")
        elif not 0.0 <= value:
            raise ValueError(f"Invalid {'epsilon' if name == 'eps' else name} value: {value}")


def params_with_grad(optimizer: Any, group: dict[str, Any]) -> Iterator[tuple[Tensor, Tensor, dict[str, Any]]]:
    """Yield ``(param, grad, state)`` for each parameter of ``group`` that has a gradient, in group order.

    ``state`` is ``optimizer.state[param]`` (empty on the first step, for the caller to initialize).
    """
    state = optimizer.state
    for p in group["params"]:
        grad = p.grad
        if grad is None:
            continue
        yield p, grad, state[p]


def lr_value(lr: Any) -> float:
    """The learning rate as a Python number (a 1-element tensor lr is read once per step)."""
    return lr.item() if isinstance(lr, Tensor) else lr


def scalar_dtype() -> Any:
    """PyTorch keeps scalar state (``step``, ``mu_product``, ...) in float64 only when that is the default dtype."""
    return torchplug.float64 if torchplug.get_default_dtype() == torchplug.float64 else torchplug.float32


def scalar_tensor(value: float) -> Tensor:
    """A 0-dim scalar-state tensor holding ``value`` (kept on the CPU, as PyTorch does without capturable)."""
    return torchplug.tensor(value, dtype=scalar_dtype())


def real_views(param: Tensor, grad: Tensor, state: dict[str, Any], *keys: str) -> tuple[Any, ...]:
    """``(param, grad, state[key], ...)`` for one update (``None`` for a missing key).

    A complex parameter is updated as PyTorch does: through ``view_as_real`` of the parameter, its
    gradient and its state, so element-wise rules see the real and imaginary parts as separate reals
    (``exp_avg_sq`` accumulates re(g)^2 and im(g)^2, never the complex g^2). The views share storage,
    so the updates land in the complex tensors.
    """
    tensors = (param, grad, *(state.get(k) for k in keys))
    if not param.is_complex():
        return tensors
    view_as_real = torchplug.view_as_real
    return tuple(None if t is None else view_as_real(t) for t in tensors)


def set_group_defaults(optimizer: Any, **defaults: Any) -> None:
    """Fill flags missing from param groups loaded from an older state_dict (as PyTorch's ``__setstate__``)."""
    for group in optimizer.param_groups:
        for key, value in defaults.items():
            group.setdefault(key, value)


def tensorize_scalar_state(optimizer: Any, keys: tuple[str, ...]) -> None:
    """Turn plain-number scalar state (older checkpoints stored ``step`` as a float) into scalar tensors."""
    for group in optimizer.param_groups:
        for p in group["params"]:
            p_state = optimizer.state.get(p)
            if not p_state:
                continue
            for key in keys:
                if key in p_state and not isinstance(p_state[key], Tensor):
                    p_state[key] = scalar_tensor(float(p_state[key]))
