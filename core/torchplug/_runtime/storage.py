"""The memory behind tensors: a backend buffer, its size and the version counter views share."""

from __future__ import annotations

from typing import Any

__all__ = ["Storage", "SharedStorage"]


class _ByteCount(int):
    """A storage's size in bytes: an int for the code that reads ``storage.nbytes``, and callable, so
    PyTorch's ``storage.nbytes()`` works on the same attribute."""

    __slots__ = ()

    def __call__(self) -> int:
        return int(self)


class Storage:
    """The memory behind one or more tensors: backend buffer, size, and the shared version counter.

    Views share their base's Storage, so an in-place write through any of them bumps one
    counter, as in PyTorch.  It is PyTorch's ``UntypedStorage`` too: the byte-level methods that
    need ops (``tolist``, ``fill_``, ``copy_``, ``clone``...) are attached by ``torchplug._ops``.
    """

    # ``_nbytes``: the byte count the allocators and the C fast path fill (``nbytes`` reads it)
    __slots__ = ("version", "_nbytes", "device", "data", "allocation", "__weakref__")
    is_sparse = False
    is_sparse_csr = False

    def __init__(self, nbytes: int, dev: Any, data: Any = None) -> None:
        self.version = 0
        self._nbytes = nbytes
        self.device = dev
        self.data = data  # backend-defined root buffer (e.g. the base ndarray), may be None
        self.allocation = None  # allocator bookkeeping, owned by the backend's allocator

    @property
    def nbytes(self) -> Any:
        """The size in bytes (also callable: ``storage.nbytes()``, as PyTorch's)."""
        n = self._nbytes
        return _ByteCount(n) if n.__class__ is int else n  # (whatever else a caller stored, unchanged)

    @nbytes.setter
    def nbytes(self, value: int) -> None:
        self._nbytes = value

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def get_device(self) -> int | None:
        """The device's index (None for the cpu, as PyTorch's storages answer)."""
        return self.device.index

    def untyped(self) -> Storage:
        """This storage (it is already untyped)."""
        return self

    def is_pinned(self, device: Any = "cuda") -> bool:
        """False: torchplug storages are never page-locked."""
        return False

    def resizable(self) -> bool:
        """False: tensors view the buffer directly, so it is never reallocated in place."""
        return False

    @property
    def filename(self) -> None:
        """None: no storage is backed by a file."""
        return None

    # PyTorch's UntypedStorage queries scripts use to tell whether two tensors share memory
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
        return self._nbytes

    def __len__(self) -> int:
        return self._nbytes

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
