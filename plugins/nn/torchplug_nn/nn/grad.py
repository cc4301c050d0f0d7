"""``nn.grad``: gradients of ``conv1d/2d/3d`` with respect to their input or weight, computed directly.

Each is ATen's ``convolution_backward`` asked for one of its outputs, as in PyTorch; custom
``autograd.Function`` s (e.g. a fused conv + batch norm) use them to write their backward.
"""

from __future__ import annotations

from typing import Any

import torchplug

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


def _tuple(value: Any, n: int) -> list[int]:
    return list(value) if isinstance(value, (tuple, list)) else [value] * n


def _backward(n: int, grad_output: Any, input: Any, weight: Any, stride: Any, padding: Any, dilation: Any,
              groups: int, mask: tuple[bool, bool, bool]) -> Any:
    return torchplug.ops.aten.convolution_backward(
        grad_output, input, weight, None, _tuple(stride, n), _tuple(padding, n), _tuple(dilation, n), False,
        [0] * n, groups, mask)


def _input_grad(n: int, input_size: Any, weight: Any, grad_output: Any, stride: Any, padding: Any, dilation: Any,
                groups: int) -> Any:
    input = grad_output.new_empty(1).expand(input_size)  # only its shape is read
    return _backward(n, grad_output, input, weight, stride, padding, dilation, groups, (True, False, False))[0]


def _weight_grad(n: int, input: Any, weight_size: Any, grad_output: Any, stride: Any, padding: Any, dilation: Any,
                 groups: int) -> Any:
    weight = grad_output.new_empty(1).expand(weight_size)  # only its shape is read
    return _backward(n, grad_output, input, weight, stride, padding, dilation, groups, (False, True, False))[1]


def conv1d_input(input_size: Any, weight: Any, grad_output: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1) -> Any:
    """Gradient of ``conv1d`` with respect to an input of shape ``input_size``."""
    return _input_grad(1, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input: Any, weight_size: Any, grad_output: Any, stride: Any = 1, padding: Any = 0,
                  dilation: Any = 1, groups: int = 1) -> Any:
    """Gradient of ``conv1d`` with respect to a weight of shape ``weight_size``."""
    return _weight_grad(1, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size: Any, weight: Any, grad_output: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1) -> Any:
    """Gradient of ``conv2d`` with respect to an input of shape ``input_size``."""
    return _input_grad(2, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input: Any, weight_size: Any, grad_output: Any, stride: Any = 1, padding: Any = 0,
                  dilation: Any = 1, groups: int = 1) -> Any:
    """Gradient of ``conv2d`` with respect to a weight of shape ``weight_size``."""
    return _weight_grad(2, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size: Any, weight: Any, grad_output: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1) -> Any:
    """Gradient of ``conv3d`` with respect to an input of shape ``input_size``."""
    return _input_grad(3, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input: Any, weight_size: Any, grad_output: Any, stride: Any = 1, padding: Any = 0,
                  dilation: Any = 1, groups: int = 1) -> Any:
    """Gradient of ``conv3d`` with respect to a weight of shape ``weight_size``."""
    return _weight_grad(3, input, weight_size, grad_output, stride, padding, dilation, groups)
