"""The few ``torch.nn.functional`` functions the distributions use, over torchplug's aten ops.

The nn functions live in another plugin (torchplug-nn); plugins stay independent, so these call the
same aten operators directly.
"""

from __future__ import annotations

from typing import Any

import torchplug as torch

__all__ = ["softplus", "logsigmoid", "one_hot", "softmax", "pad", "binary_cross_entropy_with_logits"]

_aten = torch.ops.aten


def softplus(input: Any, beta: float = 1.0, threshold: float = 20.0) -> Any:
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold`` (F.softplus)."""
    return _aten.softplus(input, beta, threshold)


def logsigmoid(input: Any) -> Any:
    """``log(sigmoid(x))`` computed stably (F.logsigmoid)."""
    return _aten.log_sigmoid(input)


def one_hot(tensor: Any, num_classes: int = -1) -> Any:
    """int64 one-hot encoding along a new last dimension (F.one_hot)."""
    return _aten.one_hot(tensor, num_classes)


def softmax(input: Any, dim: int) -> Any:
    """Softmax along ``dim`` (F.softmax)."""
    return torch.softmax(input, dim)


def pad(input: Any, pad: Any, mode: str = "constant", value: float = 0.0) -> Any:
    """Constant padding of the last dimensions (F.pad with mode='constant')."""
    if mode != "constant":
        raise NotImplementedError(f"pad: only mode='constant' is used by torchplug.distributions, got {mode!r}")
    return torch.constant_pad_nd(input, pad, value)


def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Any = None, reduction: str = "mean",
                                     pos_weight: Any = None) -> Any:
    """Binary cross entropy of logits ``input`` against ``target`` (F.binary_cross_entropy_with_logits)."""
    codes = {"none": 0, "mean": 1, "sum": 2}
    return torch.binary_cross_entropy_with_logits(input, target, weight, pos_weight, codes[reduction])
