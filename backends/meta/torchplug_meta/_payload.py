"""``MetaArray``: the payload of a meta tensor: shape, byte strides, dtype and offset, never data."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["MetaArray", "contiguous_strides", "storage_bytes"]


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides in elements; size-0 dims count as 1, like PyTorch's ``contiguous_strides``."""
    strides = [1] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        s = shape[i]
        acc *= s if s > 1 else 1
    return tuple(strides)


def storage_bytes(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int, offset: int = 0) -> int:
    """Bytes of storage a tensor with these sizes/strides (in elements) and offset reaches."""
    extent = 1
    for size, stride in zip(shape, strides):
        if size == 0:
            return offset * itemsize
        extent += (size - 1) * stride
    return (offset + extent) * itemsize


class MetaArray:
    """What a meta tensor knows about itself.

    Attributes:
        shape: sizes, a tuple of ints.
        strides: strides in BYTES (like NumPy's; ``Tensor.stride()`` divides by the item size).
        dtype: the NumPy dtype of the elements.
        offset: the storage offset, in elements.
        nbytes: bytes of storage this layout needs (offset included); nothing is allocated.
    """

    __slots__ = ("shape", "strides", "dtype", "offset", "nbytes")

    data_ptr = 0  # meta tensors have no memory; Tensor.data_ptr() reads this

    def __init__(self, shape: tuple[int, ...], strides: tuple[int, ...], dtype: np.dtype, offset: int = 0,
                 nbytes: int | None = None) -> None:
        self.shape = shape
        self.strides = strides
        self.dtype = dtype
        self.offset = offset
        if nbytes is None:
            item = dtype.itemsize
            nbytes = storage_bytes(shape, tuple(s // item for s in strides), item, offset)
        self.nbytes = nbytes

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def __repr__(self) -> str:
        item = self.dtype.itemsize
        return (f"MetaArray(shape={self.shape}, stride={tuple(s // item for s in self.strides)}, "
                f"dtype={self.dtype}, offset={self.offset})")

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
