"""Tensors as contiguous NumPy arrays for a communication library, and the write-back afterwards."""

from __future__ import annotations

from typing import Any

import numpy as np

import torchplug

__all__ = ["HostBuffer", "byte_view"]


class HostBuffer:
    """``array``: the tensor's data as a C-contiguous host array (its own memory when possible).

    A tensor that is not contiguous, or lives on another device, is copied; :meth:`commit` then
    writes the array back into it, so in-place collectives keep PyTorch's semantics for any tensor.
    """

    __slots__ = ("tensor", "array", "copied")

    def __init__(self, tensor: Any) -> None:
        t = tensor.detach()
        copied = t.device.type != "cpu"
        if copied:
            t = t.cpu()
        if t.is_conj() or t.is_neg():  # a lazily conjugated/negated view: operate on its resolved values
            t = t.resolve_conj().resolve_neg()
            copied = True
        array = t.numpy()
        if not array.flags.c_contiguous:
            array = np.ascontiguousarray(array)
            copied = True
        self.tensor = tensor
        self.array = array
        self.copied = copied

    def commit(self) -> None:
        """Write :attr:`array` back into the tensor if it is a copy."""
        if self.copied:
            self.tensor.detach().copy_(torchplug.from_numpy(self.array))


def byte_view(array: np.ndarray) -> np.ndarray:
    """The bytes of a C-contiguous array as a flat uint8 view (any dtype, bfloat16 and bool included)."""
    return array.reshape(-1).view(np.uint8)
