"""The memory behind tensors: a backend buffer, its size and the version counter views share."""

from __future__ import annotations

from typing import Any

__all__ = ["Storage", "SharedStorage"]


class Storage:
    """The memory behind one or more tensors: backend buffer, size, and the shared version counter.

    Views share their base's Storage, so an in-place write through any of them bumps one
    counter, as in PyTorch.
    """

    __slots__ = ("version", "nbytes", "device", "data", "allocation", "__weakref__")

    def __init__(self, nbytes: int, dev: Any, data: Any = None) -> None:
        self.version = 0
        self.nbytes = nbytes
        self.device = dev
        self.data = data  # backend-defined root buffer (e.g. the base ndarray), may be None
        self.allocation = None  # allocator bookkeeping, owned by the backend's allocator

    # PyTorch's UntypedStorage queries scripts use to tell whether two tensors share memory
    # (``nbytes`` stays the attribute the allocators and the C fast path fill)
    def data_ptr(self) -> int:
        """Address of the storage's first byte (0 for storage without data)."""
        root = self.data
        ptr = getattr(root, "data_ptr", None)
        if ptr is not None:
            return ptr() if callable(ptr) else int(ptr)
        iface = getattr(root, "__array_interface__", None)
        return iface["data"][0] if iface else 0

    def size(self) -> int:
        """The size in bytes (an untyped storage's elements are bytes)."""
        return self.nbytes

    def __len__(self) -> int:
        return self.nbytes

    def element_size(self) -> int:
        """1: an untyped storage's elements are bytes."""
        return 1


class SharedStorage(Storage):
    """Another storage's memory under a version counter of its own.

    PyTorch's ``unsafe_split``/``unsafe_chunk`` pieces share their input's memory but not its version
    counter, so an in-place write to one piece does not invalidate what autograd saved of another (ATen's
    GRU cell writes its gate pieces in place).  ``owner`` keeps the memory, and its allocator accounting,
    alive as long as a piece is.
    """

    __slots__ = ("owner",)

    def __init__(self, owner: Storage) -> None:
        super().__init__(owner.nbytes, owner.device, owner.data)
        self.owner = owner
