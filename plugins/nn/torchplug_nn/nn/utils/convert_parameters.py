"""Flatten parameters into one vector and back."""

from __future__ import annotations

from typing import Any

import torchplug
from torchplug._tensor.tensor import Tensor

from ... import _grad

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Any) -> Tensor:
    return torchplug.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Any) -> None:
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    with _grad.no_grad():
        for param in parameters:
            n = param.numel()
            param.copy_(vec[pointer:pointer + n].reshape(param.shape))
            pointer += n
