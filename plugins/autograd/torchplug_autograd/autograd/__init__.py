"""``torchplug.autograd``: reverse-mode automatic differentiation (provided by the autograd plugin)."""

from __future__ import annotations

from typing import Any

from torchplug._tensor import Tensor

from torchplug_autograd._engine import backward, grad
from torchplug_autograd.autograd import anomaly_mode, function, functional, grad_mode, graph
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
    "grad_mode", "anomaly_mode", "function", "Variable",
]

Variable = Tensor  # PyTorch's legacy name


def __getattr__(name: str) -> Any:
    if name == "forward_ad":
        raise AttributeError("torchplug.autograd.forward_ad is not implemented (forward-mode AD is not supported)")
    raise AttributeError(f"module 'torchplug.autograd' has no attribute {name!r}")
