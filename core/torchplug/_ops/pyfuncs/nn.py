"""Bindings of the nn ops: the ``torchplug.<name>`` functions PyTorch has (conv2d, softmax, layer_norm...).

No op of the nn table gets a generated function or Tensor method (most live in
``torch.nn.functional`` only); the ones PyTorch exposes at top level are listed here.
"""

from __future__ import annotations

from typing import Any

from torchplug._dispatch.aten import A
from torchplug._schemas.nn import ROWS
from torchplug._tensor.tensor import Tensor

__all__ = ["HANDWRITTEN", "FUNCTIONS", "METHODS"]

HANDWRITTEN = frozenset(row.split("(")[0].split(".")[0] for row in ROWS)


def _conv(n: int):
    plain, strpad = A[f"conv{n}d"], A[f"conv{n}d.padding"]

    def conv(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
             dilation: Any = 1, groups: int = 1) -> Tensor:
        if isinstance(padding, str):
            return strpad(input, weight, bias, stride, padding, dilation, groups)
        return plain(input, weight, bias, stride, padding, dilation, groups)

    conv.__name__ = f"conv{n}d"
    conv.__doc__ = f"{n}-D convolution (see torchplug.nn.functional.conv{n}d)."
    return conv


def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """Softmax along ``dim`` (optionally computed in ``dtype``)."""
    return A.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """Log of softmax along ``dim``."""
    return A.log_softmax(input, dim, dtype)


def _method_softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    return A.softmax(self, dim, dtype)


def _method_log_softmax(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    return A.log_softmax(self, dim, dtype)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """1-D max pooling returning (values, indices)."""
    return A.max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def _entry(name: str):
    return A[name]


def _published() -> dict[str, Any]:
    names = {
        "convolution": "convolution", "conv_transpose1d": "conv_transpose1d", "conv_transpose2d": "conv_transpose2d",
        "conv_transpose3d": "conv_transpose3d", "max_pool1d": "max_pool1d", "max_pool2d": "max_pool2d",
        "max_pool3d": "max_pool3d", "avg_pool1d": "avg_pool1d", "adaptive_avg_pool1d": "adaptive_avg_pool1d",
        "adaptive_max_pool1d": "adaptive_max_pool1d", "_softmax": "_softmax", "_log_softmax": "_log_softmax",
        "_softmax_backward_data": "_softmax_backward_data", "_log_softmax_backward_data": "_log_softmax_backward_data",
        "layer_norm": "layer_norm", "native_layer_norm": "native_layer_norm", "batch_norm": "batch_norm",
        "native_batch_norm": "native_batch_norm", "group_norm": "group_norm", "native_group_norm": "native_group_norm",
        "instance_norm": "instance_norm", "rms_norm": "rms_norm", "dropout": "dropout", "dropout_": "dropout_",
        "feature_dropout": "feature_dropout", "feature_dropout_": "feature_dropout_", "alpha_dropout": "alpha_dropout",
        "alpha_dropout_": "alpha_dropout_", "feature_alpha_dropout": "feature_alpha_dropout",
        "feature_alpha_dropout_": "feature_alpha_dropout_", "native_dropout": "native_dropout",
        "embedding": "embedding", "embedding_renorm_": "embedding_renorm_", "selu": "selu", "selu_": "selu_",
        "celu": "celu", "celu_": "celu_", "threshold": "threshold", "threshold_": "threshold_", "prelu": "prelu",
        "hardshrink": "hardshrink", "binary_cross_entropy_with_logits": "binary_cross_entropy_with_logits",
        "kl_div": "kl_div", "constant_pad_nd": "constant_pad_nd", "pixel_shuffle": "pixel_shuffle",
        "pixel_unshuffle": "pixel_unshuffle", "cosine_similarity": "cosine_similarity",
        "pairwise_distance": "pairwise_distance",
    }
    out: dict[str, Any] = {name: _entry(op) for name, op in names.items()}
    out.update({f"conv{n}d": _conv(n) for n in (1, 2, 3)})
    out.update(softmax=softmax, log_softmax=log_softmax, max_pool1d_with_indices=max_pool1d_with_indices)
    return out


FUNCTIONS: dict[str, Any] = _published()

METHODS: dict[str, Any] = {
    "softmax": _method_softmax,
    "log_softmax": _method_log_softmax,
    "prelu": lambda self, weight: A.prelu(self, weight),
    "hardshrink": lambda self, lambd=0.5: A.hardshrink(self, lambd),
}
