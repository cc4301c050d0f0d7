"""``torchplug.autograd``: reverse-mode automatic differentiation (provided by the autograd plugin)."""

from __future__ import annotations

import warnings
from typing import Any

from torchplug._tensor.tensor import Tensor

from torchplug_autograd._engine import backward, grad
from torchplug_autograd._engine import current_graph_task_id as _current_graph_task_id
from torchplug_autograd._engine import is_checkpoint_valid as _is_checkpoint_valid
from torchplug_autograd.autograd import anomaly_mode, forward_ad, function, functional, grad_mode, graph, profiler
from torchplug_autograd.autograd.anomaly_mode import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from torchplug_autograd.autograd.function import Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable
from torchplug_autograd.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from torchplug_autograd.autograd.grad_mode import (
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
    set_multithreading_enabled,
)

__all__ = [
    "backward", "grad", "Function", "FunctionCtx", "once_differentiable", "InplaceFunction", "NestedIOFunction",
    "gradcheck", "gradgradcheck", "GradcheckError", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
    "inference_mode", "is_inference_mode_enabled", "set_multithreading_enabled", "graph", "functional",
    "grad_mode", "anomaly_mode", "function", "Variable", "forward_ad",
]

class _VariableMeta(type):
    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """PyTorch's legacy wrapper: ``Variable(t, requires_grad=True)`` is a leaf alias of ``t``
    (sharing its memory) that requires grad; every tensor is a ``Variable`` for ``isinstance``.

    Args:
        data: a tensor (an empty float tensor when omitted).
        requires_grad: whether the result requires grad (floating point and complex only).
        volatile: removed in PyTorch; warns and has no effect (use ``torchplug.no_grad()``).
    """

    def __new__(cls, data: Any = None, requires_grad: bool = False, volatile: bool = False) -> Any:  # type: ignore[misc]
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            from torchplug._tensor.creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if requires_grad and not (data.dtype.is_floating_point or data.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        out = data.detach()  # a leaf sharing data's memory, as PyTorch's Variable(t) is
        if requires_grad:
            out.requires_grad_(True)
        return out


def __getattr__(name: str) -> Any:
    raise AttributeError(f"module 'torchplug.autograd' has no attribute {name!r}")
