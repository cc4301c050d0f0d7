"""``linear_cross_entropy`` (cross entropy of a linear projection, PyTorch 2.13's reference path) and the
argument check ``assert_int_or_pair`` of ``torch.nn.functional``."""

from __future__ import annotations

import dataclasses
from typing import Any

import torchplug

__all__ = ["linear_cross_entropy", "assert_int_or_pair"]


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """PyTorch's settings of ``linear_cross_entropy``'s chunked path (``nn.LinearCrossEntropyOptions``).  torchplug
    accepts them and computes the logits whole: the loss and its gradients are the reference path's."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None


def assert_int_or_pair(arg: Any, arg_name: str, message: str) -> None:
    """Raise ``AssertionError(message.format(arg_name))`` unless ``arg`` is an int or has two items."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


def linear_cross_entropy(input: Any, linear_weight: Any, target: Any, *, linear_bias: Any = None, weight: Any = None,
                         reduction: str = "mean", ignore_index: int | None = None, label_smoothing: float = 0.0,
                         options: Any = None) -> Any:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``; ``linear_weight`` of shape
    ``(C, d_1, ..., d_K, in_features)`` gives K-dimensional logits ``(N, C, d_1, ..., d_K)``.  ``options`` (the
    chunked path's settings) changes no value: the logits are computed whole."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got {tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    logits = torchplug.tensordot(input, linear_weight, dims=([input.dim() - 1], [linear_weight.dim() - 1]))
    if linear_bias is not None:
        logits = logits + linear_bias
    return torchplug.nn.functional.cross_entropy(
        logits, target, weight=weight, reduction=reduction, ignore_index=-100 if ignore_index is None else ignore_index,
        label_smoothing=label_smoothing)
