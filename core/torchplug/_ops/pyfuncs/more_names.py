"""Smaller names of ``torch``'s namespace: ``channel_shuffle``/``native_channel_shuffle``, ``empty_permuted``,
``conv_tbc``, ``cudnn_is_acceptable`` (False), the function forms ``index_put``, ``resize_as_`` and
``detach_copy``, ``init_num_threads``, ``set_flush_denormal`` and the build flags ``has_lapack`` and
``has_spectral`` (``has_mkl``/``has_openmp`` come from ``torchplug.backends``)."""

from __future__ import annotations

from typing import Any

from torchplug._base.layout import contiguous_format
from torchplug._dispatch.aten import A
from torchplug._tensor.tensor import Tensor

__all__ = ["FUNCTIONS", "METHODS"]


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Split the channels (dim 1) into ``groups`` and interleave them (ShuffleNet's shuffle)."""
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"[{', '.join(str(s) for s in input.shape)}]")
    b, c = input.shape[0], input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    rest = list(input.shape[2:])
    return input.reshape([b, groups, c // groups] + rest).transpose(1, 2).reshape([b, c] + rest)


def empty_permuted(size: Any, physical_layout: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                   requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialized tensor of ``size`` whose dims are laid out in memory in ``physical_layout``'s order
    (outermost first)."""
    size, order = [int(s) for s in size], [int(d) for d in physical_layout]
    if len(order) != len(size):
        raise RuntimeError("Number of dimensions in size does not match the length of the physical_layout; "
                           f"i.e. len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}")
    if len(set(order)) != len(order):
        raise RuntimeError("Duplicate dim not allowed")
    from torchplug._ops.torch_namespace import TORCH

    physical = TORCH.empty([size[d] for d in order], dtype=dtype, device=device)
    inverse = [0] * len(order)
    for i, d in enumerate(order):
        inverse[d] = i
    result = physical.permute(inverse)
    return result.requires_grad_() if requires_grad else result


def index_put(input: Tensor, indices: Any, values: Tensor, accumulate: bool = False) -> Tensor:
    """``input`` with ``values`` put (or added, ``accumulate``) at ``indices`` (out of place)."""
    return A.index_put(input, list(indices), values, accumulate)


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """Resize ``input`` in place to ``the_template``'s shape."""
    return input.resize_as_(the_template)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-d convolution in time-batch-channel layout: ``input (T, B, C_in)``, ``weight (K, C_in, C_out)``."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if bias.dim() != 1 or bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    from torchplug._ops.torch_namespace import TORCH

    out = TORCH.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


def cudnn_is_acceptable(input: Tensor) -> bool:
    """False: torchplug has no cuDNN."""
    return False


def detach_copy(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """A copy of ``input`` detached from autograd (``detach`` without the aliasing)."""
    result = input.detach().clone()
    return result if out is None else out.resize_(result.shape).copy_(result)


def set_flush_denormal(mode: bool) -> bool:
    """Flush denormal floats to zero (``True``) or not in this thread's host computations; True when the
    platform lets torchplug set the mode (see :mod:`torchplug._base.denormals`)."""
    from torchplug._base.denormals import set_flush_denormal as _set

    return _set(mode)


def init_num_threads() -> None:
    """Initialize the intra-op thread pool of this thread (nothing to do: the pools start on demand)."""
    return None


FUNCTIONS: dict[str, Any] = {
    "channel_shuffle": channel_shuffle, "native_channel_shuffle": channel_shuffle, "empty_permuted": empty_permuted,
    "index_put": index_put, "resize_as_": resize_as_, "init_num_threads": init_num_threads, "conv_tbc": conv_tbc,
    "cudnn_is_acceptable": cudnn_is_acceptable, "set_flush_denormal": set_flush_denormal, "detach_copy": detach_copy,
    "legacy_contiguous_format": contiguous_format,  # torch's old name of the same memory format
    "has_lapack": True, "has_spectral": True,  # LAPACK (NumPy/SciPy) and the FFTs are always there
}
METHODS: dict[str, Any] = {}
